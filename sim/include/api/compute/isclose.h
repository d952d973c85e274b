// isclose of two DST tiles on the SFPU (api/compute/isclose.h): 1.0f where |a - b| <= atol + rtol * |b|
// (rtol, atol as fp32 bits), else 0.0f; equal infinities are close; NaNs are close to each other only
// with EQUAL_NAN. Exact in fp32.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::isclose {
template <bool equal_nan>
inline float value(float a, float b, const uint32_t* p) {
    if (std::isnan(a) || std::isnan(b)) return (equal_nan && std::isnan(a) && std::isnan(b)) ? 1.0f : 0.0f;
    if (std::isinf(a) || std::isinf(b)) return a == b ? 1.0f : 0.0f;
    return std::fabs(a - b) <= sfpu::as_float(p[1]) + sfpu::as_float(p[0]) * std::fabs(b) ? 1.0f : 0.0f;
}
// Two loads, ~8 arithmetic and compare steps, a store (estimate).
constexpr uint64_t kCost = 12 * sfpu_cost::kPass;
}  // namespace ttsim::isclose

namespace ckernel {

ALWI void isclose_binary_tile_init() { ttsim::sfpu::setup("isclose"); }
template <bool EQUAL_NAN = false>
ALWI void isclose_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, uint32_t rtol_bits, uint32_t atol_bits) {
    ttsim::sfpu::binary<ttsim::isclose::value<EQUAL_NAN>>("isclose_binary_tile", "isclose", ttsim::isclose::kCost, idst0, idst1,
                                                          odst, VectorMode::RC, rtol_bits, atol_bits);
}

}  // namespace ckernel
