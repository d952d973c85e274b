// Shared numbers of the GDN conv kernels: the conv's shape, the constant tiles the reader writes
// once (bf16, 0/1), and the per-unit runtime arguments.
#pragma once

#include <cstdint>

namespace gdn {

constexpr uint32_t kConvWidth = 4;                   // taps; the last one multiplies the current token
constexpr uint32_t kConvStateRows = kConvWidth - 1;  // rows carried between calls
constexpr uint32_t kConvShiftTaps = kConvWidth - 1;  // taps that read earlier rows

constexpr uint32_t kConstShiftCur0 = 0;                          // tap t: kConstShiftCur0 + t
constexpr uint32_t kConstShiftPrev0 = kConstShiftCur0 + kConvShiftTaps;
constexpr uint32_t kConstOnes = kConstShiftPrev0 + kConvShiftTaps;
constexpr uint32_t kConvNumConsts = kConstOnes + 1;

// Runtime args of the conv kernels: the number of units, then per unit kConvUnitArgs values.
constexpr uint32_t kConvUnitArgs = 5;
constexpr uint32_t kUnitFirstChannelTile = 0;
constexpr uint32_t kUnitWidth = 1;
constexpr uint32_t kUnitFirstTokenTile = 2;
constexpr uint32_t kUnitEndTokenTile = 3;
constexpr uint32_t kUnitNormMode = 4;

// Runtime-arg index of one field of a unit.
constexpr uint32_t conv_unit_arg(uint32_t unit, uint32_t field) { return 1 + unit * kConvUnitArgs + field; }
constexpr uint32_t kNormNone = 0;      // v channels: conv + SiLU only
constexpr uint32_t kNormL2 = 1;        // k heads: then x / sqrt(sum(x^2) + eps)
constexpr uint32_t kNormL2Scaled = 2;  // q heads: and times the scale

}  // namespace gdn
