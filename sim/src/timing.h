// Cost constants of the Wormhole timing model, each named once with its source (shared/WORMHOLE.md).
//
// The simulator advances a fiber's clock by these costs as it executes API calls. It is a model of
// the hardware, not a measurement of it: every figure it reports is labelled "modeled".
#pragma once

#include <cstdint>

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

// Unpack at 64 B/cycle, pack at 4 x 16 B/cycle (derived in WORMHOLE.md): a bf16 tile is >= 32 cycles each.
// There are two unpackers (unpacker 0 -> srcA or DST, unpacker 1 -> srcB; ISA doc Unpackers/README.md).
// One alone reads L1 at up to four 128-bit words a cycle (64 B); both at once share three of their
// ports and reach five words a cycle together (80 B) (ISA doc TensixTile/L1.md, "Maximum theoretical
// bandwidth"; tt-metal's eltwise performance models use the same 80 B/cycle shared figure).
constexpr uint64_t kUnpackBytesPerCycle = 64;
constexpr uint64_t kUnpackJointBytesPerCycle = 80;
constexpr uint64_t kPackBytesPerCycle = 64;

// SFPU: 32 lanes, a tile is 32 iterations, so >= 32 cycles per tile per instruction (VectorUnit.md).
constexpr uint64_t kSfpuSimpleTileCycles = 32;
// exp, accurate path: 7-9x the ~71-cycle approximate path (tt-metal #56925, tt-llk PR #1190); 8x taken.
constexpr uint64_t kSfpuExpTileCycles = 71 * 8;
constexpr uint64_t kSfpuExpApproxTileCycles = 71;
// reciprocal ~1,060 cycles per tile (tt-metal PR #54938, derived).
constexpr uint64_t kSfpuRecipTileCycles = 1060;
// sqrt / rsqrt ~550-870 cycles per tile (tt-metal PR #54317, derived); midpoint taken.
constexpr uint64_t kSfpuSqrtTileCycles = 710;

// NoC (tt-npe device_models/wormhole_b0): read latency 70-270 cycles by distance; 9 cycles a hop.
constexpr uint64_t kNocBaseLatency = 70;
constexpr uint64_t kNocCyclesPerHop = 9;
// Per-transfer rate by size (tt-npe), bytes per cycle.
inline double noc_bytes_per_cycle(uint32_t size) {
    if (size >= 2048) return 30.0;
    if (size >= 1024) return 27.4;
    if (size >= 512) return 18.0;
    if (size >= 256) return 10.1;
    return 5.5;
}
// NoC link: 30 B/cycle (tt-npe's link model; ~32 B/cycle per link in the ISA doc).
constexpr double kNocLinkBytesPerCycle = 30.0;
// DRAM: 12 channels; 22.2 GB/s measured reads per channel (DRAMTile/README.md) = 22.2 B/cycle at 1 GHz.
constexpr double kDramChannelBytesPerCycle = 22.2;

// Issuing a NoC command or touching a circular buffer's registers: a handful of RISC-V cycles
// (not sourced: a small fixed overhead so loops of calls are not free).
constexpr uint64_t kApiCallCycles = 4;
constexpr uint64_t kNocIssueCycles = 8;

}  // namespace ttsim::timing
