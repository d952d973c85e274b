// mish on the SFPU, in place on a DST tile (api/compute/eltwise_unary/mish.h):
// x * tanh(log(1 + exp(x))), fp32 with the C library. Cost: an exp, a log and a tanh (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::mish {
inline float value(float x, const uint32_t*) { return x * std::tanh(std::log1p(std::exp(x))); }
}  // namespace ttsim::mish

namespace ckernel {

template <bool APPROXIMATION_MODE>
ALWI void mish_tile_init() { ttsim::sfpu::setup("mish"); }
template <bool APPROXIMATION_MODE, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mish_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::mish::value>("mish_tile", "mish",
                                           ttsim::sfpu_cost::kExp + ttsim::sfpu_cost::kLog + ttsim::sfpu_cost::kPolynomial, idst);
}

}  // namespace ckernel
