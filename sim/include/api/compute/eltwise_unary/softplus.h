// softplus on the SFPU, in place on a DST tile (api/compute/eltwise_unary/softplus.h):
// (1/beta) * log(1 + exp(beta * x)), and x itself where beta * x > threshold (beta, 1/beta and the
// threshold as fp32 bits), in fp32 with the C library. Cost: two accurate exps (estimate, the
// simulator's figure for it since its first model).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

namespace ttsim::softplus {
inline float value(float x, const uint32_t* p) {
    const float beta = sfpu::as_float(p[0]), threshold = sfpu::as_float(p[1]);
    return (beta * x > threshold) ? x : std::log1p(std::exp(beta * x)) / beta;
}
}  // namespace ttsim::softplus

namespace ckernel {

ALWI void softplus_tile_init() { ttsim::sfpu::setup("softplus"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold) {
    (void)beta_reciprocal;
    ttsim::sfpu::unary<ttsim::softplus::value>("softplus_tile", "softplus", 2 * ttsim::sfpu_cost::kExp, idst,
                                               VectorMode::RC, beta, threshold);
}
ALWI void softplus_tile_init_pack() {
    TTSIM_NOT_MODELED("softplus_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)");
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void softplus_tile_pack(uint32_t, uint32_t, uint32_t, uint32_t) {
    TTSIM_NOT_MODELED("softplus_tile_pack", "the pack thread runs only exp (exp_packthread_tile)");
}

}  // namespace ckernel
