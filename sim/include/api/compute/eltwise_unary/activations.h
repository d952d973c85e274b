// Piecewise activations on the SFPU, in place on a DST tile (api/compute/eltwise_unary/activations.h).
// hardsigmoid: clamp(x / 6 + 1/2, 0, 1); softsign: x / (1 + |x|); celu: max(x, 0) +
// min(0, alpha * (exp(x / alpha) - 1)); softshrink: x -+ lambda outside [-lambda, lambda], else 0;
// hardshrink: x outside [-lambda, lambda], else 0. Parameters are fp32 bits. fp32, C library.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::act {
using sfpu::as_float;
inline float hardsigmoid(float x, const uint32_t*) { return std::fmin(std::fmax(x / 6.0f + 0.5f, 0.0f), 1.0f); }
inline float softsign(float x, const uint32_t*) { return x / (1.0f + std::fabs(x)); }
inline float celu(float x, const uint32_t* p) {
    const float alpha = as_float(p[0]), alpha_recip = as_float(p[1]);
    return x > 0.0f ? x : alpha * std::expm1(x * alpha_recip);
}
inline float softshrink(float x, const uint32_t* p) {
    const float l = as_float(p[0]);
    return x > l ? x - l : x < -l ? x + l : 0.0f;
}
inline float hardshrink(float x, const uint32_t* p) {
    const float l = as_float(p[0]);
    return (x > l || x < -l) ? x : 0.0f;
}
}  // namespace ttsim::act

namespace ckernel {

ALWI void hardsigmoid_tile_init() { ttsim::sfpu::setup("hardsigmoid"); }
ALWI void hardsigmoid_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::act::hardsigmoid>("hardsigmoid_tile", "hardsigmoid", 3 * ttsim::sfpu_cost::kPass, idst);
}
ALWI void softsign_tile_init() { ttsim::sfpu::setup("softsign"); }
ALWI void softsign_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::act::softsign>("softsign_tile", "softsign", ttsim::sfpu_cost::kRecip + 2 * ttsim::sfpu_cost::kPass,
                                             idst);
}
ALWI void celu_tile_init() { ttsim::sfpu::setup("celu"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void celu_tile(uint32_t idst, uint32_t alpha, uint32_t alpha_recip) {
    ttsim::sfpu::unary<ttsim::act::celu>("celu_tile", "celu", ttsim::sfpu_cost::kExp + 2 * ttsim::sfpu_cost::kPass, idst,
                                         VectorMode::RC, alpha, alpha_recip);
}
ALWI void softshrink_tile_init() { ttsim::sfpu::setup("softshrink"); }
ALWI void softshrink_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::act::softshrink>("softshrink_tile", "softshrink", 3 * ttsim::sfpu_cost::kPass, idst,
                                               VectorMode::RC, param0);
}
ALWI void hardshrink_tile_init() { ttsim::sfpu::setup("hardshrink"); }
ALWI void hardshrink_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::act::hardshrink>("hardshrink_tile", "hardshrink", 3 * ttsim::sfpu_cost::kPass, idst,
                                               VectorMode::RC, param0);
}
ALWI void hardsigmoid_tile_init_pack() {
    TTSIM_NOT_MODELED("hardsigmoid_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)");
}
ALWI void hardsigmoid_tile_pack(uint32_t) {
    TTSIM_NOT_MODELED("hardsigmoid_tile_pack", "the pack thread runs only exp (exp_packthread_tile)");
}

}  // namespace ckernel
