// The simulated Wormhole chip: DRAM banks, Tensix cores with their L1, and a program run on them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "numerics.h"

namespace ttsim {

constexpr int kGridX = 8, kGridY = 8;
constexpr uint32_t kL1Bytes = 1499136;         // WORMHOLE.md: 1464 KiB usable L1 per core
// Semaphores sit at the bottom of L1, 16 B apart. Where circular buffers start (above the card's
// firmware and kernel-config region) is the host's choice, made in ttprefill/device/program.py.
constexpr uint32_t kSemaphoreStride = 16;
constexpr int kMaxSemaphores = 16;
constexpr uint32_t kSemaphoreBytes = kSemaphoreStride * kMaxSemaphores;
constexpr int kNumCircularBuffers = 32;
constexpr int kDramBanks = 12;
// NoC address encoding (as Wormhole's): 36 bits of local address, then 6 bits of x and 6 of y.
constexpr int kNocAddrBits = 36;
constexpr uint64_t kNocLocalMask = (uint64_t(1) << kNocAddrBits) - 1;
// DRAM bank b answers at NoC x = kDramNocX0 + b, y = kDramNocY (outside the Tensix grid).
constexpr uint32_t kDramNocX0 = 32, kDramNocY = 32;
// Multicast addresses carry the end corner in the upper bits (our encoding; kernels only pass them on).
constexpr int kMcastEndShift = 48;

class SimError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class RoleKind : int { Riscv0 = 0, Riscv1 = 1, Compute = 2 };
const char* role_name(RoleKind r);

struct CoreXY {
    int x = 0, y = 0;
    bool operator<(const CoreXY& o) const { return y != o.y ? y < o.y : x < o.x; }
    bool operator==(const CoreXY& o) const { return x == o.x && y == o.y; }
};

struct KernelSpec {
    std::string so_path;
    std::string name;
    RoleKind role = RoleKind::Riscv0;
    int noc = 0;  // the NoC a data-movement kernel's transfers use (its processor's default unless moved)
    std::vector<CoreXY> cores;
    std::map<CoreXY, std::vector<uint32_t>> runtime_args;
    std::vector<uint32_t> common_args;
    MathFidelity fidelity = MathFidelity::HiFi4;
    bool fp32_dest = false;
    bool approx = false;
    // Bit i set: CB i is in UnpackToDestFp32 mode (ttnn's ComputeConfig unpack_to_dest_mode), so
    // copy_tile moves its Float32 tiles straight into fp32 DST. Otherwise they pass through srcA as TF32.
    uint32_t unpack_to_dest_fp32 = 0;
};

struct CBSpec {
    CoreXY core;
    int index = 0;
    DataFormat format = DataFormat::Float16_b;
    uint32_t page_size = 0;
    uint32_t num_pages = 0;
    uint32_t l1_offset = 0;
};

struct SemaphoreSpec {
    CoreXY core;
    int id = 0;
    uint32_t initial = 0;
};

struct ProgramSpec {
    std::string name = "program";
    std::vector<KernelSpec> kernels;
    std::vector<CBSpec> cbs;
    std::vector<SemaphoreSpec> semaphores;
    bool timing_only = false;  // run control flow, CB traffic and costs; skip tile arithmetic
    bool trace = false;        // record per-fiber spans (busy work and waits) for a Chrome trace
    int cost_setting = 1;      // timing::CostSetting: which end of the uncertain costs' ranges (central)
    // Fault guards (docs/faults.md). Where circular buffers may start: below it (above the semaphores)
    // is the firmware's, which no NoC write may touch; 0 means the lowest CB on each core.
    uint32_t l1_reserved = 0;
    // The watchdog stops a run once no CB, NoC or semaphore traffic happened for this many modeled
    // cycles, or for this many seconds of the simulator thread's CPU time.
    uint64_t watchdog_cycles = 4000000000ull;
    double watchdog_seconds = 120.0;
    // A fiber that runs this long in kernel code without an API call is taken to be spinning on L1.
    double spin_seconds = 0.01;
};

struct RoleStats {
    RoleKind role;
    std::string kernel;
    uint64_t end_cycle = 0;     // the fiber's clock when it finished
    uint64_t busy_cycles = 0;   // cycles spent on its own work
    uint64_t stall_cycles = 0;  // cycles spent waiting for other fibers (CBs, semaphores, barriers)
};

struct CoreStats {
    CoreXY core;
    std::vector<RoleStats> roles;
};

struct Counters {
    uint64_t matmul_tiles = 0;      // 32x32x32 tile matmuls
    uint64_t fpu_flops = 0;         // useful FLOPs on the matrix unit (2 per multiply-add)
    uint64_t fpu_busy_cycles = 0;
    uint64_t sfpu_busy_cycles = 0;
    // Unpacker (TRISC0) and packer (TRISC2) busy cycles, summed over cores: with the math figures
    // above they show which of the three compute pipelines bounds a kernel.
    uint64_t unpack_busy_cycles = 0;
    uint64_t pack_busy_cycles = 0;
    uint64_t dram_read_bytes = 0;
    uint64_t dram_write_bytes = 0;
    uint64_t noc_bytes = 0;
    uint64_t api_calls = 0;
    uint64_t context_switches = 0;
    uint64_t dram_busy_cycles = 0;  // summed over the 12 channels
};

struct TraceSpan {
    int core_x, core_y;
    std::string role, name;
    uint64_t start, end;
};

// What one profiler zone (DeviceZoneScopedN) accumulated over all its entries on all cores: how often
// it ran, the cycles its fibers' clocks advanced inside it, and the busy cycles of each compute
// pipeline (zero for data-movement kernels) and of the RISC-V (data movement) inside it.
struct ZoneTotals {
    uint64_t entries = 0;
    uint64_t elapsed = 0;
    uint64_t unpack = 0, math = 0, pack = 0;
    uint64_t busy = 0;
};

struct RunResult {
    uint64_t cycles = 0;
    std::map<std::string, ZoneTotals> zones;
    std::vector<CoreStats> cores;
    Counters counters;
    std::vector<TraceSpan> trace;
};

// DRAM: 12 banks; a buffer has the same base address in every bank, page i in bank i % 12.
//
// Each bank is a reserved range of virtual memory that the OS backs only where it is written: an
// allocation costs no host memory until data lands in it, reads of never-written bytes see zeros, and
// a freed allocation gives its memory back. A timing-only run of a 32k-token layer so needs host
// memory only for what the host uploads (see Scheduler::noc_write for what kernels write).
class Dram {
public:
    Dram();
    ~Dram();
    Dram(const Dram&) = delete;
    Dram& operator=(const Dram&) = delete;
    uint32_t allocate(uint64_t bytes_per_bank, uint32_t pages = 0, uint32_t page_stride = 0);
    void free(uint32_t base);
    // Checks that [offset, offset + size) lies inside one live allocation of the bank.
    uint8_t* at(int bank, uint64_t offset, uint32_t size, const char* what);
    uint64_t bytes_in_use() const;
    void clear();

private:
    // Drop the host memory behind [offset, offset + size) of every bank; it reads as zero afterwards.
    void discard(uint64_t offset, uint64_t size);
    struct Allocation {
        uint64_t bytes = 0;  // per bank
        // The tensor's pages, when the host said (0: unknown): bank b holds pages b, b + 12, ..., so
        // the bytes past its last page are padding that no kernel may read or write.
        uint32_t pages = 0;
        uint32_t page_stride = 0;
    };
    std::map<uint32_t, Allocation> allocations_;  // base -> its allocation
    uint8_t* banks_[kDramBanks] = {};
    static constexpr uint64_t kBankAddressSpace = uint64_t(1) << 32;  // addresses are 32-bit per bank
    static constexpr uint32_t kBaseAddress = 0x10000;  // leave address 0 unused, as on hardware
    static constexpr uint32_t kAlignment = 32;
};

class Scheduler;

class Device {
public:
    Device();
    ~Device();
    Dram& dram() { return dram_; }
    RunResult run(const ProgramSpec& program);

private:
    Dram dram_;
    std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace ttsim
