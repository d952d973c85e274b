// Trigonometric and hyperbolic functions on the SFPU, in place on a DST tile
// (api/compute/eltwise_unary/trigonometry.h).
//
// Values: the C library's, in fp32. tt-llk evaluates these with range reduction and polynomials
// (and, for the inverse hyperbolics, through log and sqrt); computing them exactly is a documented
// simulator difference, within bf16 resolution of the device's accurate results.
// Cost: estimates (ttsim/sfpu_cost.h): a polynomial each; the inverse hyperbolics a log plus a sqrt.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::trig {
inline float sin_value(float x, const uint32_t*) { return std::sin(x); }
inline float cos_value(float x, const uint32_t*) { return std::cos(x); }
inline float tan_value(float x, const uint32_t*) { return std::tan(x); }
inline float asin_value(float x, const uint32_t*) { return std::asin(x); }
inline float acos_value(float x, const uint32_t*) { return std::acos(x); }
inline float atan_value(float x, const uint32_t*) { return std::atan(x); }
inline float sinh_value(float x, const uint32_t*) { return std::sinh(x); }
inline float cosh_value(float x, const uint32_t*) { return std::cosh(x); }
inline float asinh_value(float x, const uint32_t*) { return std::asinh(x); }
inline float acosh_value(float x, const uint32_t*) { return std::acosh(x); }
inline float atanh_value(float x, const uint32_t*) { return std::atanh(x); }
constexpr uint64_t kInverseHyperbolic = sfpu_cost::kLog + sfpu_cost::kSqrt;
// sinh / cosh: two exps.
constexpr uint64_t kHyperbolic = 2 * sfpu_cost::kExp;
}  // namespace ttsim::trig

namespace ckernel {

ALWI void sin_tile_init() { ttsim::sfpu::setup("sine"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sin_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::sin_value>("sin_tile", "sine", ttsim::sfpu_cost::kPolynomial, idst);
}
ALWI void cos_tile_init() { ttsim::sfpu::setup("cosine"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void cos_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::cos_value>("cos_tile", "cosine", ttsim::sfpu_cost::kPolynomial, idst);
}
ALWI void tan_tile_init() { ttsim::sfpu::setup("tan"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tan_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::tan_value>("tan_tile", "tan", ttsim::sfpu_cost::kPolynomial, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void asin_tile_init() { ttsim::sfpu::setup("asin"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void asin_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::asin_value>("asin_tile", "asin", ttsim::sfpu_cost::kPolynomial, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void acos_tile_init() { ttsim::sfpu::setup("acos"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void acos_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::acos_value>("acos_tile", "acos", ttsim::sfpu_cost::kPolynomial, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void atan_tile_init() { ttsim::sfpu::setup("atan"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void atan_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::atan_value>("atan_tile", "atan", ttsim::sfpu_cost::kPolynomial, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sinh_tile_init() { ttsim::sfpu::setup("sinh"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sinh_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::sinh_value>("sinh_tile", "sinh", ttsim::trig::kHyperbolic, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void cosh_tile_init() { ttsim::sfpu::setup("cosh"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void cosh_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::cosh_value>("cosh_tile", "cosh", ttsim::trig::kHyperbolic, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void asinh_tile_init() { ttsim::sfpu::setup("asinh"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void asinh_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::asinh_value>("asinh_tile", "asinh", ttsim::trig::kInverseHyperbolic, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void acosh_tile_init() { ttsim::sfpu::setup("acosh"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void acosh_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::acosh_value>("acosh_tile", "acosh", ttsim::trig::kInverseHyperbolic, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void atanh_tile_init() { ttsim::sfpu::setup("atanh"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void atanh_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::trig::atanh_value>("atanh_tile", "atanh", ttsim::trig::kInverseHyperbolic, idst);
}

}  // namespace ckernel
