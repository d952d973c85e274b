// Modeled SFPU cycles per 32x32 tile (all four faces) that the kernel headers pass with each
// elementwise SFPU function. Sourced figures are shared/WORMHOLE.md's; the estimates are counts of
// the LLK's SFPU instructions per element pass (one instruction over a tile is 32 iterations, so
// >= 32 cycles) and carry the range docs/TIMING.md gives them.
#pragma once

#include <cstdint>

namespace ttsim::sfpu_cost {

// One SFPU instruction pass over a tile: 32 lanes, 32 iterations (VectorUnit.md, tt-metal #55801).
constexpr uint64_t kPass = 32;
// Simple ops (compare, select, abs, negate, integer add, scalar arithmetic): the simulator's floor of
// one pass, as the existing ops (estimate: their LLK loops are 3-6 instructions, 96-192 cycles).
constexpr uint64_t kSimple = kPass;
// exp: ~71 cycles a tile on the approximate path (tt-llk PR #1190); the accurate path 7-9x that
// (tt-metal #56925), 8x taken.
constexpr uint64_t kExpApprox = 71;
constexpr uint64_t kExp = 71 * 8;
// reciprocal ~1,060 cycles a tile (tt-metal PR #54938, derived).
constexpr uint64_t kRecip = 1060;
// sqrt / rsqrt ~550-870 cycles a tile (tt-metal PR #54317, derived), midpoint.
constexpr uint64_t kSqrt = 710;
// log: two accurate exps' worth, the simulator's figure for it since its first SFPU model (estimate:
// range reduction plus a degree ~5 polynomial, 300-1,200 cycles).
constexpr uint64_t kLog = 2 * kExp;
// Estimate: a polynomial of degree ~7-12 by Horner's rule plus range reduction (sin, cos, tan, atan,
// erf, tanh, gelu's CDF polynomial): ~12-25 instructions per pass, 384-800 cycles; 600 taken.
constexpr uint64_t kPolynomial = 600;
// 32-bit integer multiply: tt-llk's mul_int32 loop body is 30 SFPU instructions (byte-sliced
// products on the fp32 multiplier, recombined), run once per 32-lane row: 30 x 32 = 960 (derived).
constexpr uint64_t kIntMul = 30 * kPass;
// Estimate: a piecewise-linear LUT evaluation (tt-llk's approximate gelu: load, multiply, SFPLUT, add,
// store): ~5 instructions, 128-256 cycles; 160 taken.
constexpr uint64_t kLut = 5 * kPass;
// Estimate: a format conversion (typecast): 2-8 instructions, 64-256 cycles; 128 taken.
constexpr uint64_t kConvert = 128;

// Raw SFPI code (sfpi.h) is charged by the instructions it executes: each 32-lane instruction (a DST
// load or store, an arithmetic op, a comparison, a lane-mask change) one cycle, i.e. kPass per
// instruction over a whole tile (estimate: IPC 1, issue latency not modeled; VectorUnit.md lists
// latencies of 1-2 cycles). Library helpers the emulation computes lane by lane (exp, reciprocal,
// softplus) charge their tile figure above per 32-lane application: figure / 32 instructions.
constexpr uint64_t kSfpiInstruction = 1;

}  // namespace ttsim::sfpu_cost
