// Snake-beta on the SFPU (api/compute/eltwise_unary/snake_beta.h): odst = x + sin(alpha * x)^2 / beta
// for DST tiles x, alpha and beta, in fp32 with the C library (tt-llk reduces the angle and fits a
// polynomial, and multiplies by beta's reciprocal). Cost: a polynomial and a reciprocal (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::snake_beta {
inline float value(float x, float alpha, float beta, const uint32_t*) {
    const float s = std::sin(alpha * x);
    return x + s * s / beta;
}
}  // namespace ttsim::snake_beta

namespace ckernel {

ALWI void snake_beta_tile_init() { ttsim::sfpu::setup("snake_beta"); }
template <DataFormat data_format, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void snake_beta_tile(uint32_t idst_x, uint32_t idst_alpha, uint32_t idst_beta, uint32_t idst_out) {
    ttsim::sfpu::ternary<ttsim::snake_beta::value>("snake_beta_tile", "snake_beta",
                                                   ttsim::sfpu_cost::kPolynomial + ttsim::sfpu_cost::kRecip, idst_x,
                                                   idst_alpha, idst_beta, idst_out);
}

}  // namespace ckernel
