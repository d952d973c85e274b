// GELU and its relatives on the SFPU, in place on a DST tile (api/compute/eltwise_unary/gelu.h).
//
// gelu_tile, approximate (fast_and_approx = true, the default): tt-llk's formula, x/2 plus a
// 6-segment piecewise-linear function of |x| (SFPLUT): slopes 0.1928, 0.4939, 0.6188, 0.6099, 0.5402,
// 0.5 and intercepts -0.00010443, -0.1604, -0.2796, -0.2635, -0.1194, 0 (its init's LUT registers,
// 16-bit floats) on |x| in [0, 0.5), [0.5, 1), [1, 1.5), [1.5, 2), [2, 3), [3, inf). Those segment
// bounds are inferred, not read from a document: with them each segment meets x (Phi(x) - 1/2) at its
// ends to within 1%, which no other split of the six does.
// gelu_tile, accurate: x * Phi(x) with the C library's erf in fp32 (tt-llk fits polynomials within
// bf16 resolution of it); gelu_tanh_tile the tanh form; gelu_derivative_tile Phi(x) + x * phi(x).
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
inline float lut_form(float x, const uint32_t*) {
    static const float kSlope[6] = {float(_Float16(0.1928f)), float(_Float16(0.4939f)), float(_Float16(0.6188f)),
                                    float(_Float16(0.6099f)), float(_Float16(0.5402f)), float(_Float16(0.5f))};
    static const float kIntercept[6] = {float(_Float16(-0.00010443f)), float(_Float16(-0.1604f)),
                                        float(_Float16(-0.2796f)),     float(_Float16(-0.2635f)),
                                        float(_Float16(-0.1194f)),     0.0f};
    const float a = std::fabs(x);
    const int k = a < 0.5f ? 0 : a < 1.0f ? 1 : a < 1.5f ? 2 : a < 2.0f ? 3 : a < 3.0f ? 4 : 5;
    return x * 0.5f + (kSlope[k] * a + kIntercept[k]);
}
constexpr uint64_t cost(bool approx) { return approx ? sfpu_cost::kLut : sfpu_cost::kPolynomial; }
}  // namespace ttsim::gelu

namespace ckernel {

template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_tile_init() { ttsim::sfpu::setup(fast_and_approx ? "gelu (approximate)" : "gelu"); }
template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_tile(uint32_t idst) {
    if constexpr (fast_and_approx) {
        ttsim::sfpu::unary<ttsim::gelu::lut_form>("gelu_tile", "gelu (approximate)", ttsim::gelu::cost(true), idst);
    } else {
        ttsim::sfpu::unary<ttsim::gelu::erf_form>("gelu_tile", "gelu", ttsim::gelu::cost(false), idst);
    }
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
