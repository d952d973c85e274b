// softplus on the vector unit (SFPU), in place on a DST tile (api/compute/eltwise_unary/softplus.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

// softplus(x) = (1/beta) * log(1 + exp(beta * x)), and x itself where beta * x > threshold
// (beta, 1/beta and threshold as fp32 bit patterns).
ALWI void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold) {
    (void)beta_reciprocal;
    TTSIM->sfpu_unary(ttsim::SfpuOp::Softplus, idst, beta, threshold);
}
ALWI void softplus_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Softplus); }
