// GELU and its relatives on the SFPU, in place on a DST tile (api/compute/eltwise_unary/gelu.h).
//
// Values: x * Phi(x) with the C library's erf (gelu_tile), the tanh form for gelu_tanh_tile, and
// Phi(x) + x * phi(x) for the derivative, all in fp32. The device's approximate gelu (the default,
// fast_and_approx = true) is a 6-entry piecewise-linear LUT plus x/2, and its accurate paths are
// polynomial or rational fits; the simulator computes the exact function either way (a documented
// difference: larger than bf16 resolution for the LUT path, which the cost still reflects).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::gelu {
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;
inline float erf_form(float x, const uint32_t*) { return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2)); }
inline float tanh_form(float x, const uint32_t*) {
    constexpr float kSqrt2OverPi = 0.79788456080286536f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}
inline float derivative(float x, const uint32_t*) {
    return 0.5f * (1.0f + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
}
constexpr uint64_t cost(bool approx) { return approx ? sfpu_cost::kLut : sfpu_cost::kPolynomial; }
}  // namespace ttsim::gelu

namespace ckernel {

template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_tile_init() { ttsim::sfpu::setup("gelu"); }
template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::gelu::erf_form>("gelu_tile", "gelu", ttsim::gelu::cost(fast_and_approx), idst);
}
template <bool fast = false>
ALWI void gelu_tanh_tile_init() { ttsim::sfpu::setup("gelu_tanh"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE, bool fast = false>
ALWI void gelu_tanh_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::gelu::tanh_form>("gelu_tanh_tile", "gelu_tanh", ttsim::sfpu_cost::kPolynomial, idst);
}
template <bool fast_and_approx = false>
ALWI void gelu_derivative_tile_init() { ttsim::sfpu::setup("gelu_derivative"); }
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_derivative_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::gelu::derivative>("gelu_derivative_tile", "gelu_derivative",
                                                ttsim::sfpu_cost::kPolynomial + ttsim::sfpu_cost::kExp, idst);
}

// The pack thread's forms: declared only.
template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_tile_init_pack() { TTSIM_NOT_MODELED("gelu_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_tile_pack(uint32_t) { TTSIM_NOT_MODELED("gelu_tile_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
template <bool fast = false>
ALWI void gelu_tanh_tile_init_pack() {
    TTSIM_NOT_MODELED("gelu_tanh_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)");
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE, bool fast = false>
ALWI void gelu_tanh_tile_pack(uint32_t) {
    TTSIM_NOT_MODELED("gelu_tanh_tile_pack", "the pack thread runs only exp (exp_packthread_tile)");
}

}  // namespace ckernel
