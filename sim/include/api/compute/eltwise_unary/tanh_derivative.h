// Derivative of tanh on the SFPU, in place on a DST tile (api/compute/eltwise_unary/tanh_derivative.h):
// 1 - tanh(x)^2, fp32 with the C library. Cost: a tanh and two passes (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::tanh_derivative {
inline float value(float x, const uint32_t*) {
    const float t = std::tanh(x);
    return 1.0f - t * t;
}
}  // namespace ttsim::tanh_derivative

namespace ckernel {

template <bool fast_and_approx = false>
ALWI void tanh_derivative_tile_init() { ttsim::sfpu::setup("tanh_derivative"); }
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tanh_derivative_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::tanh_derivative::value>("tanh_derivative_tile", "tanh_derivative",
                                                      ttsim::sfpu_cost::kPolynomial + 2 * ttsim::sfpu_cost::kPass, idst);
}

}  // namespace ckernel
