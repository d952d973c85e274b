// Square root on the SFPU, in place on a DST tile (api/compute/eltwise_unary/sqrt.h): sqrtf in fp32.
// Cost: the sqrt figure.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

namespace ttsim::sqrt {
inline float value(float x, const uint32_t*) { return std::sqrt(x); }
}  // namespace ttsim::sqrt

namespace ckernel {

ALWI void sqrt_tile_init() { ttsim::sfpu::setup("sqrt"); }
template <bool FAST_APPROX = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sqrt_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::sqrt::value>("sqrt_tile", "sqrt", ttsim::sfpu_cost::kSqrt, idst);
}

}  // namespace ckernel
