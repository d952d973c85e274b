// Cost constants of the Wormhole timing model, each named once with its source (shared/WORMHOLE.md).
//
// The simulator advances a fiber's clock by these costs as it executes API calls. It is a model of
// the hardware, not a measurement of it: every figure it reports is labelled "modeled".
#pragma once

#include <cstdint>

#include "../include/ttsim/sfpu_cost.h"

namespace ttsim::timing {

// Clock: 1 GHz (ISA doc BabyRISCV, MatrixUnit).
constexpr double kClockHz = 1.0e9;

// FPU: one 8x16 by 16x16 multiply per cycle per fidelity phase, so a 32x32x32 tile matmul is 16
// cycles per phase (tech_reports/matrix_engine, GEMM_FLOPS): LoFi 16, HiFi2 32, HiFi3 48, HiFi4 64.
constexpr uint64_t kMatmulTileCyclesPerPhase = 16;
// Element-wise add/sub: 8x16 per cycle, fidelity-free (ISA doc) -> 1024 / 128 = 8 cycles a tile;
// element-wise mul takes one pass per fidelity phase.
constexpr uint64_t kEltwiseTileCyclesPerPhase = 8;
// Reduce: 16x16 per cycle (ISA doc) -> 4 cycles a tile.
constexpr uint64_t kReduceTileCycles = 4;
// Moving a tile from srcA to DST (copy / transpose) goes through the FPU datapath like an add.
constexpr uint64_t kDatacopyTileCycles = 8;

// Unpack: two unpackers (unpacker 0 -> srcA or DST, unpacker 1 -> srcB; ISA doc Unpackers/README.md).
// tt-llk configures both at Throttle_mode 2 ("x4", cunpack_common.h configure_unpack_AB), under which one
// unpacker alone fetches up to 64 B/cycle from L1; when both are active and both want x4 each is granted x2,
// 32 B/cycle (ISA doc UNPACR_Regular.md, "Performance"), so together they move at most 64 B/cycle. The joint
// figure is a cost setting (Costs::unpack_joint_bytes_per_cycle): L1.md's port count allows 80.
constexpr uint64_t kUnpackBytesPerCycle = 64;
// Every UNPACR spends exactly two cycles computing its first L1 address (uncompressed data), during which
// no other UNPACR may start (UNPACR_Regular.md, "Performance"). The matmul unpacker issues one UNPACR per
// tile (full-tile unpack, tt-llk llk_unpack_AB_matmul.h); the other unpack LLKs one per 16x16 face
// (llk_unpack_A.h / llk_unpack_AB.h loop their MOPs over the tile's four faces).
constexpr uint64_t kUnpacrSetupCycles = 2;
constexpr uint64_t kUnpacrPerTileMatmul = 1;
constexpr uint64_t kUnpacrPerTileFaces = 4;
constexpr uint64_t kPackBytesPerCycle = 64;

// SFPU: the per-tile figures live with the kernel headers that pass them (sim/include/ttsim/sfpu_cost.h,
// each with its source); the simulator's own SFPU ops (pack-thread exp, cumsum, broadcasts) use these.
constexpr uint64_t kSfpuSimpleTileCycles = sfpu_cost::kSimple;
constexpr uint64_t kSfpuExpTileCycles = sfpu_cost::kExp;
constexpr uint64_t kSfpuExpApproxTileCycles = sfpu_cost::kExpApprox;

// NoC: 9 cycles a hop (tt-npe device_models/wormhole_b0); the latencies themselves are measured (Costs below).
constexpr uint64_t kNocCyclesPerHop = 9;
// Per-transfer rate by size (tt-npe), bytes per cycle.
inline double noc_bytes_per_cycle(uint32_t size) {
    if (size >= 2048) return 30.0;
    if (size >= 1024) return 27.4;
    if (size >= 512) return 18.0;
    if (size >= 256) return 10.1;
    return 5.5;
}
// NoC link: 30 B/cycle (tt-npe's link model; ~32 B/cycle per link in the ISA doc). Every link between
// neighbouring NoC nodes has this rate and is shared by the transfers whose route crosses it (noc_routes.h).
constexpr double kNocLinkBytesPerCycle = 30.0;

// Issuing a NoC command or touching a circular buffer's registers: a handful of RISC-V cycles
// (not sourced: a small fixed overhead so loops of calls are not free).
constexpr uint64_t kApiCallCycles = 4;
constexpr uint64_t kNocIssueCycles = 8;

// ---- Model version and cost settings
//
// The version names the set of costs the simulator charges; every benchmark's JSON records it. It
// changes with any cost, and a kernel tuned against the model is re-checked after each change.
constexpr const char* kModelVersion = "2.4";

// Costs that no Wormhole measurement pins down are a range (docs/TIMING.md, "Cost settings"): a run
// takes every one of them at its low end, its central value or its high end, so a headline figure is a
// band rather than one number. Central is the default.
enum class CostSetting : int { Low = 0, Central = 1, High = 2 };

struct Costs {
    // One *_init / reconfig_data_format / compute_kernel_hw_startup call site, on each TRISC thread it
    // reprograms. Measured ~70-75 cycles a site on Blackhole (tt-metal #56692, per site derived from the
    // zone totals); no Wormhole figure: estimate 20-120.
    uint64_t init_site;
    // Fixed cycles of one unpack, math or pack LLK call beyond its data-rate cost (address set-up,
    // starting its instruction loop). Estimate 2-20: #55760's ~74 fixed cycles per q tile per step on
    // Blackhole spread over the ~8-12 calls of such a step.
    uint64_t llk_call;
    // A tile matmul in a running loop takes this fraction more than its ideal cycles: 36.85 / 35.27 /
    // 34.53 against 32 at HiFi2 for k-chunks of 128 / 256 / 512 on Blackhole (tt-metal #55760): 8-15 %.
    double matmul_tile_extra;
    // Share of a DRAM channel's 24 B/cycle that loaded DRAM sustains. 22.2 B/cycle (92.5 %) is measured
    // for one core's reads (DRAMTile/README.md; tt-metal data_movement perf plots); bank conflicts and
    // read/write turnaround under many cores are not measured: estimate 75-92.5 %.
    double dram_efficiency;
    // Round trip of a DRAM read, and a core-to-core write's latency at zero distance. Measured on
    // Wormhole (tt-metal tests/tt_metal/tt_metal/data_movement perf plots, one transaction of 32 B):
    // 384 cycles for a DRAM read and 294 for an L1-to-L1 write, issue and transfer included; the
    // latency is what remains of those once this model's issue and transfer cycles are taken off.
    uint64_t dram_latency;
    uint64_t l1_latency;
    // Bytes per cycle the two unpackers move together when both are active. 64: each granted x2 (32 B/cycle)
    // when both want x4 (UNPACR_Regular.md's speed table); 80: L1.md's "five 128-bit reads per cycle" for
    // both unpackers (its theoretical port count). Low 80, central and high 64.
    uint64_t unpack_joint_bytes_per_cycle;
};

constexpr double kDramChannelPeakBytesPerCycle = 24.0;  // 24 GB/s per channel (DRAMTile/README.md)
// One core's own DRAM traffic tops out below its NoC port's 30 B/cycle: 22.2 B/cycle for reads and
// 21.6-22.0 for writes in steady state, reading or writing 4 KiB and larger transactions of an
// interleaved buffer (tt-metal data_movement perf plots, wormhole_b0; the same 22 / 21 B/cycle are the
// lower bounds tt-metal's data-movement tests hold the hardware to, test_bounds.yaml).
constexpr double kCoreDramReadBytesPerCycle = 22.2;
constexpr double kCoreDramWriteBytesPerCycle = 21.8;
// The write figure is what a GDDR6 channel ingests: 1, 12 or 48 Tensix tiles writing 1 MiB each into one
// channel at once all get 21.9-22.0 GB/s with static virtual channels, and 48 tiles paired carefully with
// the 12 channels 263.7 GB/s, 22.0 a channel (ISA doc DRAMTile/README.md, "Performance").
//
// A write into DRAM holds every link of its route at that ingest rate, not the link's. L1 sends at the
// link rate while the channel ingests ~22, so a stream of writes fills the routers' buffers along its path
// (same section); tt-metal sends every unicast write on one static virtual channel (NOC_UNICAST_WRITE_VC
// with NOC_CMD_VC_STATIC, dataflow_api_common.h / noc_nonblocking_api.h), and a virtual channel carries one
// packet across a link until the whole packet has crossed (ISA doc NoC/README.md, "Virtual channels"), so
// the packet at the head moves, and holds the link, at the rate its channel drains it. The link ledger
// books the bytes the link could have carried meanwhile. Reads are not held so: their responses leave DRAM
// at the channel's rate on dynamically allocated response channels, and the same measurements show random
// reads at 69 % of the DRAM peak on NoC 0 where random writes get 18 %.
inline double dram_write_link_bytes(uint32_t size) {
    return double(size) * kNocLinkBytesPerCycle / kCoreDramWriteBytesPerCycle;
}

inline const Costs& costs(CostSetting setting) {
    static constexpr Costs kLow{20, 2, 0.08, 0.925, 370, 270, 80};
    static constexpr Costs kCentral{70, 8, 0.10, 0.85, 370, 270, 64};
    static constexpr Costs kHigh{120, 20, 0.15, 0.75, 370, 270, 64};
    switch (setting) {
        case CostSetting::Low: return kLow;
        case CostSetting::High: return kHigh;
        case CostSetting::Central: break;
    }
    return kCentral;
}

}  // namespace ttsim::timing
