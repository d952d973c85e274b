// remainder by a scalar on the SFPU, in place on a DST tile (api/compute/eltwise_unary/remainder.h):
// x - value * floor(x / value), the sign of the divisor (as torch.remainder), NaN for a zero divisor.
// The init takes the value and its reciprocal (fp32 bits). remainder_tile_uint32: x % value on
// words. Exact in fp32 (the simulator does not reproduce tt-llk's reciprocal rounding).
#pragma once

#include <limits>

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::remainder {
inline float value(float x, const uint32_t* p) {
    const float s = sfpu::as_float(p[4]);
    if (s == 0.0f) return std::numeric_limits<float>::quiet_NaN();
    float r = std::fmod(x, s);
    if (r != 0.0f && ((r < 0.0f) != (s < 0.0f))) r += s;
    return r;
}
inline uint32_t uint32_word(uint32_t x, const uint32_t* p) { return p[0] == 0 ? 0 : x % p[0]; }
}  // namespace ttsim::remainder

namespace ckernel {

ALWI void remainder_tile_init(uint32_t param0, uint32_t param1) { ttsim::sfpu::setup("remainder", param0, param1); }
ALWI void remainder_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::remainder::value>("remainder_tile", "remainder",
                                                ttsim::sfpu_cost::kRecip + 6 * ttsim::sfpu_cost::kPass, idst);
}
ALWI void remainder_tile_uint32_init() { ttsim::sfpu::setup("remainder_uint32"); }
ALWI void remainder_tile_uint32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::remainder::uint32_word>("remainder_tile_uint32", "remainder_uint32",
                                                            ttsim::sfpu_cost::kIntMul, idst, true, param0);
}

}  // namespace ckernel
