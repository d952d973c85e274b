// softplus on the vector unit (SFPU), in place on a DST tile (api/compute/eltwise_unary/softplus.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

// softplus(x) = (1/beta) * log(1 + exp(beta * x)), and x itself where beta * x > threshold
// (beta, 1/beta and threshold as fp32 bit patterns).
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold) {
    (void)beta_reciprocal;
    TTSIM->sfpu_unary(ttsim::SfpuOp::Softplus, idst, beta, threshold);
}
ALWI void softplus_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Softplus); }
ALWI void softplus_tile_init_pack() {
    TTSIM_NOT_MODELED("softplus_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)");
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void softplus_tile_pack(uint32_t, uint32_t, uint32_t, uint32_t) {
    TTSIM_NOT_MODELED("softplus_tile_pack", "the pack thread runs only exp (exp_packthread_tile)");
}
