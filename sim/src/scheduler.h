// Execution of a program: per-core state, one cooperative fiber per kernel role per core, and a
// deterministic discrete-event scheduler that always resumes the runnable fiber with the smallest
// clock (ties broken by fiber id), so the same program gives the same bytes and cycles every run.
#pragma once

#include <signal.h>
#include <ucontext.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device.h"
#include "noc_routes.h"
#include "timing.h"
#include "../include/ttsim/kernel_api.h"

namespace ttsim {

// Each fiber's stack, and below it an inaccessible guard region as large as the biggest stack frame a
// kernel could plausibly declare, so that an overflow faults (guard.cpp) instead of writing over
// whatever lies below. Only address space: the guard costs no memory.
constexpr size_t kFiberStackBytes = 1 << 20;
constexpr size_t kFiberGuardBytes = size_t(64) << 20;
// Cores' L1 sit kL1Stride apart in one mapping; the gap after each is inaccessible, so a raw store past
// the end of a core's L1 faults.
constexpr uint32_t kL1Stride = kL1Bytes + 4096 * 4;

struct CircularBuffer {
    bool configured = false;
    DataFormat format = DataFormat::Float16_b;
    uint32_t page_size = 0;
    uint32_t num_pages = 0;
    uint32_t l1_offset = 0;
    uint64_t pushed = 0;    // pages pushed since the program started
    uint64_t popped = 0;    // pages popped since the program started
    uint32_t reserved = 0;  // pages the producer holds reserved
    uint32_t pack_cursor = 0;
    // Pages a cb_wait_front (or a cb_pages_available_at_front that said yes) has covered since the
    // program started: a consumer may only unpack or pop pages below this mark (faults.md).
    uint64_t waited = 0;
    const KernelSpec* producer = nullptr;  // the last kernel that reserved or pushed, for end-of-run messages
    // Pages of the latest cb_reserve_back when no cb_push_back followed it (0 once one did). On the device a
    // reservation is only a wait for room, so only the last one can be left open by a missing push.
    uint32_t open_reservation = 0;
    std::vector<uint64_t> push_time, pop_time;  // per slot: when its current page was pushed / last popped
    // Per slot: the push count right after the cb_push_back that pushed its current page. A wait that
    // covers one page of a push covers the whole push: the device's received counter moves by the whole
    // push at once (a kernel may push a full tail block and wait for its valid part only, as tt-metal's
    // layernorm does, then pop the full block).
    std::vector<uint64_t> push_end;
    // Per slot: the kernel that pushed its current page, the kernel that last popped a page from it, and
    // the kernel whose packer rewrote the current page in place after pushing it (nullptr: none). With
    // `consumer` (the last kernel that waited for or popped pages) they decide which packs outside a
    // reservation and which pops without a wait are legal (docs/faults.md, "Circular buffers").
    std::vector<const KernelSpec*> push_by, pop_by, rewritten_by;
    const KernelSpec* consumer = nullptr;
    uint32_t write_slot() const { return uint32_t(pushed % num_pages); }
    uint32_t read_slot() const { return uint32_t(popped % num_pages); }
    uint64_t fill() const { return pushed - popped; }
};

struct Core {
    CoreXY xy;
    uint8_t* l1 = nullptr;  // kL1Bytes, mapped below 4 GiB so a kernel can use L1 addresses as pointers
    uint32_t l1_base = 0;   // the kernel-visible address of L1 offset 0
    std::array<CircularBuffer, kNumCircularBuffers> cbs;
    std::map<uint32_t, uint64_t> sem_time;  // L1 offset of a semaphore -> time of its last change
    bool active = false;
    // Writes into this L1 by NoC transfers and semaphore calls: a fiber spinning on an L1 word through
    // a plain pointer is woken when this count moves (at the modeled time of that write).
    uint64_t l1_writes = 0;
    uint64_t l1_write_time = 0;
};

// Bandwidth of a shared resource (a DRAM channel, a core's NoC port) as a ledger of fixed time
// buckets: a transfer fills capacity from the bucket of its issue time onwards. Unlike a single
// "busy until" time, it does not make an early request wait behind one booked by a fiber that ran
// ahead in simulated time, so results do not depend on the order fibers happen to run in.
class BandwidthLedger {
public:
    static constexpr uint64_t kBucketCycles = 256;
    explicit BandwidthLedger(double bytes_per_cycle = 1.0) : rate_(bytes_per_cycle) {}
    void reset(double bytes_per_cycle) {
        rate_ = bytes_per_cycle;
        used_.clear();
        first_ = 0;
    }
    // Book `bytes` from time t on; returns when the last byte has gone.
    uint64_t reserve(uint64_t t, double bytes);
    // Drop the buckets before time t, which no booking can start in any more (the caller passes the
    // lowest clock of any fiber that may still book): results are unchanged, and a long run keeps only
    // the buckets between its slowest and fastest fibers instead of one per 256 cycles of the run.
    void forget_before(uint64_t t);
    double rate() const { return rate_; }

private:
    double rate_;
    std::vector<double> used_;  // bytes booked per bucket, from bucket first_ on
    size_t first_ = 0;
};

struct TraceEvent {
    int core_x, core_y;
    const char* role;
    std::string name;
    uint64_t start, end;
};

struct KernelModule {
    void* handle = nullptr;
    void (*bind)(KernelApi*) = nullptr;
    void (*entry)() = nullptr;
};

// Spinning: preempted by the spin timer (guard.cpp) while looping in kernel code without calling the
// API, e.g. polling an L1 word through a volatile pointer; it runs again when its core's L1 is written.
enum class FiberState { Ready, Blocked, Done, Failed, Spinning };

// The three TRISC pipelines of a compute kernel, each with its own clock; DST is double-buffered
// between math and pack.
struct ComputeState {
    std::array<std::array<float, TILE_ELEMS>, 16> dst{};
    enum class Dst { Free, Acquired, Committed, Waited } dst_state = Dst::Free;
    uint64_t t_unpack = 0, t_math = 0, t_pack = 0;
    uint64_t unpack_busy = 0, math_busy = 0, pack_busy = 0;  // for profiler zones
    // The SFPU is one unit that the math and the pack thread both issue to: busy until t_sfpu.
    uint64_t t_sfpu = 0;
    std::optional<SfpuOp> pack_sfpu_op;  // the pack thread's SFPU init (exp_packthread_tile_init)
    uint32_t pack_sfpu_scale = 0x3F800000;  // that init's scale (fp32 bits), which the approximate exp applies
    // When the unpackers may next write srcA / srcB: each is double-buffered, so a bank is free once the
    // FPU has moved on from the operands it held (see charge_unpack and charge_matmul).
    uint64_t srca_free = 0, srcb_free = 0;
    uint64_t commit_time = 0;
    std::array<uint64_t, 2> release_time{};
    uint64_t acquisitions = 0;
    FpuOp fpu_op = FpuOp::None;
    Bcast bcast = Bcast::None;
    uint32_t fpu_flags = 0;
    int init_cb_a = -1, init_cb_b = -1;
    int srca_cb = -1, srcb_cb = -1, pack_cb = -1;
    bool pack_l1_acc = false;  // pack_reconfig_l1_acc: pack_tile adds onto the destination tile
    bool pack_relu = false;    // pack_relu_config(zero): pack_tile writes max(x, 0)
    bool started = false;
    std::optional<SfpuOp> sfpu_op;
    std::string sfpu_setup_name;  // the last sfpu_setup (generic SFPU functions); empty after an SfpuOp init
    std::array<uint32_t, kSfpuMaxParams> sfpu_setup_params{};
    // cumsum_tile's running column totals (SFPU registers on the device); any other SFPU init or op clobbers them.
    std::array<float, TILE_DIM> cumsum_carry{};
    bool cumsum_carry_valid = false;
};

struct Fiber {
    int id = 0;
    Core* core = nullptr;
    const KernelSpec* spec = nullptr;
    KernelModule* module = nullptr;
    ucontext_t ctx{};
    char* stack = nullptr;
    uint64_t clock = 0;
    FiberState state = FiberState::Ready;
    std::function<std::optional<uint64_t>()> blocker;  // time the awaited event happened, once it has
    std::string wait_desc;
    uint64_t read_done = 0, write_done = 0;
    uint64_t busy = 0, stall = 0;
    const std::vector<uint32_t>* args = nullptr;
    std::unique_ptr<ComputeState> compute;
    const char* call = "";
    // Open profiler zones, innermost last: the name and the fiber's clock and busy figures at entry.
    struct ZoneMark {
        const char* name;
        uint64_t clock, unpack, math, pack, busy;
    };
    std::vector<ZoneMark> zones;
    // NoC transfers issued since the last barrier, as L1 offset ranges of this core: reads land in
    // [first, second) (cb_push_back of those pages before noc_async_read_barrier is a fault); writes
    // still read their source from it (cb_pop_front of those pages before the write barrier is one).
    std::vector<std::pair<uint32_t, uint32_t>> pending_reads, pending_writes;
    // Where each pending read copies from: its bytes land at the barrier; until then the destination
    // holds kReadPoison, so a kernel that looks at it too early sees garbage, as it may on the device.
    std::vector<const uint8_t*> pending_read_sources;
    uint64_t spin_mark = 0;       // Scheduler::steps_ when this fiber last went Spinning
    uint64_t spin_l1_writes = 0;  // its core's l1_writes then
    bool retrying = false;        // woken to look at L1 once more with nothing else to run
};

// A fault signal caught in a kernel fiber (guard.cpp), filled in by the signal handler without
// allocating; the scheduler turns it into a SimError once it has control back.
struct CaughtFault {
    int sig = 0;
    int code = 0;
    uintptr_t addr = 0, pc = 0;
    bool in_kernel_code = false;  // the PC was in the kernel's own code, not in the simulator's
    bool stack_overflow = false;
};

class Scheduler final : public KernelApi {
public:
    Scheduler(Dram& dram);
    ~Scheduler() override;
    RunResult run(const ProgramSpec& program);

    // ---- KernelApi
    uint32_t arg(int index) override;
    uint32_t common_arg(int index) override;
    uint32_t arg_address(int index, bool common) override;
    void cb_reserve_back(int cb, int pages) override;
    void cb_push_back(int cb, int pages) override;
    void cb_wait_front(int cb, int pages) override;
    void cb_pop_front(int cb, int pages) override;
    bool cb_pages_reservable(int cb, int pages) override;
    bool cb_pages_available(int cb, int pages) override;
    uint32_t cb_write_ptr(int cb) override;
    uint32_t cb_read_ptr(int cb) override;
    uint32_t cb_page_size(int cb) override;
    uint32_t cb_data_format(int cb) override;
    uint32_t my_noc_x() override;
    uint32_t my_noc_y() override;
    uint32_t my_logical_x() override;
    uint32_t my_logical_y() override;
    uint64_t dram_page_noc_addr(uint32_t bank_base, uint32_t page_id, uint32_t page_size, uint32_t offset) override;
    uint64_t worker_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t local_addr) override;
    uint64_t multicast_noc_addr(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, uint32_t local_addr) override;
    void noc_read(uint64_t src_noc_addr, uint32_t dst_local_addr, uint32_t size) override;
    void noc_write(uint32_t src_local_addr, uint64_t dst_noc_addr, uint32_t size) override;
    void noc_write_multicast(uint32_t src_local_addr, uint64_t dst_mcast_addr, uint32_t size, uint32_t num_dests,
                             bool include_self) override;
    void noc_read_barrier() override;
    void noc_write_barrier() override;
    void noc_writes_flushed() override;
    uint32_t semaphore_addr(uint32_t id) override;
    void semaphore_wait(uint32_t local_addr, uint32_t value, bool at_least) override;
    void semaphore_set(uint32_t local_addr, uint32_t value) override;
    void semaphore_inc(uint64_t noc_addr, uint32_t incr) override;
    void semaphore_set_multicast(uint32_t src_local_addr, uint64_t dst_mcast_addr, uint32_t num_dests,
                                 bool include_self) override;
    void hw_startup(int cb_a, int cb_b, int cb_out) override;
    void unpack_reconfig(int cb_a, int cb_b) override;
    void pack_reconfig(int cb_out) override;
    void fpu_init(FpuOp op, Bcast bcast, int cb_a, int cb_b, uint32_t flags) override;
    void sfpu_init(SfpuOp op) override;
    void regs_acquire() override;
    void regs_commit() override;
    void regs_wait() override;
    void regs_release() override;
    void copy_tile(int cb, int tile, int dst) override;
    void binary_tiles(FpuOp op, Bcast bcast, int cb_a, int cb_b, int tile_a, int tile_b, int dst) override;
    void matmul_block(int cb_a, int cb_b, int tile_a, int tile_b, int dst, int transpose, int ct, int rt,
                      int kt) override;
    void reduce_tile(int pool, int dim, int cb, int cb_scaler, int tile, int tile_scaler, int dst) override;
    void transpose_tile(int cb, int tile, int dst) override;
    void sfpu_unary(SfpuOp op, int dst, uint32_t p0, uint32_t p1, uint32_t faces) override;
    void sfpu_init_on_pack(SfpuOp op, uint32_t scale) override;
    void sfpu_unary_on_pack(SfpuOp op, int dst, uint32_t p0, uint32_t p1, uint32_t faces) override;
    void sfpu_setup(const char* init_name, const uint32_t* init_params) override;
    void sfpu_eltwise(const SfpuElementwise& op, const int* in_dst, int n_in, int out_dst, uint32_t faces,
                      const uint32_t* params) override;
    void pack_tile(int dst, int cb, int out_index, bool out_of_order) override;
    void pack_l1_acc(bool enable) override;
    void pack_relu(bool enable) override;
    void tilize_tile(int cb, int tile_index, int block_ct, int dst) override;
    void pack_untilize(int cb, int dst, int block_ct, int full_ct, int col_tile) override;
    void transpose_dest(int dst, bool of_faces, bool values_32bit) override;
    void zone_begin(const char* name) override;
    void zone_end() override;
    void fail(const char* call, const char* message) override;
    uint32_t cb_fifo(int cb, CbFifo field) override;
    void semaphore_inc_multicast(uint64_t dst_mcast_addr, uint32_t incr, uint32_t num_dests) override;
    void noc_write_inline(uint64_t dst_noc_addr, uint32_t value, uint32_t byte_enable) override;
    void noc_read_zeros(uint32_t dst_local_addr, uint32_t size, uint32_t zero_chunk) override;
    void sfpu_dst_read(const char* call, int dst, uint32_t* words) override;
    void sfpu_dst_write(const char* call, int dst, const uint32_t* words) override;
    void sfpu_charge(const char* call, uint64_t cycles) override;

    static void fiber_trampoline(unsigned lo, unsigned hi);
    // guard.cpp: the fault and spin-timer signal handlers.
    static void on_fault_signal(int sig, siginfo_t* info, void* uctx);
    static void on_tick_signal(int sig, siginfo_t* info, void* uctx);

private:
    // set-up and the scheduling loop
    void setup(const ProgramSpec& program);
    KernelModule* load_module(const std::string& path);
    void schedule();
    [[noreturn]] void raise(const std::string& message);
    std::string deadlock_report() const;
    // guard.cpp: every fiber's state and every active core's CBs, for the watchdog and hang reports.
    std::string state_report() const;
    void arm_guards();
    void disarm_guards();
    std::string fault_message(const CaughtFault& f) const;
    bool pc_in_kernel(uintptr_t pc, const Fiber& f) const;
    void record_module_text(const KernelModule& m);
    // A check at the end of a run: CB pages left in a state no correct program leaves them in.
    void check_cb_balance();
    void note_progress() { ++progress_; last_progress_cycle_ = std::max(last_progress_cycle_, current_->clock); }
    void note_l1_write(Core& c, uint64_t when) {
        ++c.l1_writes;
        c.l1_write_time = std::max(c.l1_write_time, when);
    }
    // NoC writes may land only in one circular buffer, the semaphores, or L1 above every CB.
    void check_l1_target(const Core& c, uint64_t off, uint32_t size, const char* what);
    // Copy the data of this fiber's pending NoC reads into place (at its read barrier).
    void deliver_reads(Fiber& f);
    static constexpr uint8_t kReadPoison = 0xFF;  // NaN in bf16 and fp32; a huge index as an integer
    void yield_if_ahead();
    uint64_t block_until(std::function<std::optional<uint64_t>()> ready, std::string desc);

    // helpers
    Fiber& me() { return *current_; }
    Core& core_at(uint32_t noc_x, uint32_t noc_y, const char* what);
    CircularBuffer& cb_of(int cb, const char* what);
    uint32_t l1_offset_of(uint32_t local_addr, uint32_t size, const char* what);
    uint32_t l1_offset_on_any_core(uint32_t local_addr, const char* what);
    void advance(uint64_t cycles);
    ComputeState& compute_state(const char* what);
    void require_dst_index(int dst, const char* what);
    void require_math(const char* what);
    const uint8_t* front_tile(int cb, int tile, const char* what);
    void check_pack_outside_reservation(int cb, uint32_t index);
    void check_rewritten_pages(const CircularBuffer& c, int cb, int pages, const char* what);
    void load_operand(int cb, int tile, float* out, bool fpu_operand, const char* what);
    bool unpacks_to_dest(int cb, const char* what);
    void finish_dst_write(int dst);
    void require_fpu_init(FpuOp op, Bcast bcast, const char* what);
    // Unpack tiles_srca tiles of cb_srca to srcA (or DST) and tiles_srcb of cb_srcb to srcB.
    void charge_unpack(ComputeState& cs, int cb_srca, int tiles_srca, int cb_srcb, int tiles_srcb);
    // Byte-transfer cycles of the two unpackers for a and b bytes to srcA and srcB (no UNPACR set-up).
    uint64_t unpack_transfer_cycles(uint64_t a, uint64_t b) const;
    // One matmul_block call: the unpack of an rt x ct block's operands for one K step and its math,
    // pipelined at tile granularity as tt-llk's matmul LLKs do (compute.cpp).
    void charge_matmul(ComputeState& cs, int cb_in0, int cb_in1, int rt, int ct, uint64_t math_cycles);
    void charge_math(ComputeState& cs, uint64_t cycles, bool fpu);
    uint64_t noc_latency(uint32_t x, uint32_t y) const;
    // The program's cost setting (timing.h): the uncertain costs at their low, central or high end.
    const timing::Costs& costs() const { return timing::costs(timing::CostSetting(program_->cost_setting)); }
    // An init or reconfig call site: its cost on each compute pipeline it reprograms.
    void charge_init(ComputeState& cs, bool unpack, bool math, bool pack);
    // Time a NoC transfer issued now: it waits for this core's NoC port (and the DRAM channel, for a
    // DRAM bank, and every link of its route when `route` is given), occupies them for size / rate
    // cycles, and completes after the flight latency.
    uint64_t transfer(int dram_bank, uint32_t size, uint64_t latency, bool write = false,
                      const noc_routes::LinkSet* route = nullptr);
    // Which NoC this fiber's transfers use, and where a simulator coordinate (a worker or a DRAM bank)
    // sits on the chip.
    int noc_of(const Fiber& f) const;
    noc_routes::Node node_of(uint32_t noc_x, uint32_t noc_y) const;
    void trace_span(uint64_t start, uint64_t end, std::string name);
    std::vector<Core*> multicast_targets(uint64_t mcast_addr, bool include_self, uint32_t num_dests,
                                         const char* what);

    Dram& dram_;
    std::array<Core, kGridX * kGridY> cores_;
    uint8_t* l1_arena_ = nullptr;
    std::vector<std::unique_ptr<Fiber>> fibers_;
    std::map<std::string, KernelModule> modules_;
    const ProgramSpec* program_ = nullptr;
    Fiber* current_ = nullptr;
    ucontext_t main_ctx_{};
    uint64_t horizon_ = 0;
    std::optional<std::string> error_;
    Counters counters_;
    std::vector<char*> stack_pool_;
    // Shared bandwidth: when each DRAM channel and each core's port on each NoC is next free.
    std::array<BandwidthLedger, kDramBanks> dram_ledger_;
    std::array<std::array<BandwidthLedger, 2>, kGridX * kGridY> port_ledger_;
    // Every link of each NoC, shared by all transfers whose route crosses it (noc_routes.h).
    std::array<std::array<BandwidthLedger, noc_routes::kLinksPerNoc>, 2> link_ledger_;
    uint64_t transfers_since_trim_ = 0;  // NoC transfers since the ledgers last dropped their past
    void trim_ledgers();
    uint64_t dram_busy_cycles_ = 0;
    std::vector<TraceEvent> trace_;
    std::map<std::string, ZoneTotals> zone_totals_;
    // ---- fault guards (guard.cpp)
    CaughtFault fault_{};
    volatile bool fault_caught_ = false;
    uint64_t steps_ = 0;              // switches into fibers that were not spinning
    uint64_t progress_ = 0;           // CB pushes/pops, NoC transfers, semaphore writes, fibers done
    uint64_t last_progress_cycle_ = 0;
    uint64_t tick_progress_ = 0, tick_switches_ = 0;  // what the spin timer saw at its last tick
    int still_ticks_ = 0;             // ticks without a context switch
    int idle_ticks_ = 0;              // ticks without progress
    volatile bool watchdog_fired_ = false;
    void* timer_ = nullptr;
    // executable ranges of each loaded kernel, to tell a kernel's own code from the simulator's
    std::map<const KernelModule*, std::vector<std::pair<uintptr_t, uintptr_t>>> module_text_;
};

}  // namespace ttsim
