// The SFPU functions declared in api/compute/compute_kernel_api.h, in place on a DST tile.
//
// Values: computed in fp32 with the C library where tt-llk evaluates a polynomial or iteration
// (sigmoid, silu, tanh, log, exp2, expm1, power): a documented simulator difference, below bf16 resolution on the
// accurate paths. The rest (abs, sign, square, max/min, heaviside) are exact on the device too.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "ttsim/sfpu.h"

namespace ttsim::cka {
using sfpu::as_float;
inline float sigmoid_value(float x, const uint32_t*) { return 1.0f / (1.0f + std::exp(-x)); }
inline float silu_value(float x, const uint32_t*) { return x / (1.0f + std::exp(-x)); }
constexpr uint64_t kSigmoidCost = sfpu_cost::kExp + sfpu_cost::kRecip;
inline float tanh_value(float x, const uint32_t*) { return std::tanh(x); }
inline float square_value(float x, const uint32_t*) { return x * x; }
inline float log_value(float x, const uint32_t*) { return std::log(x); }
// log_with_base_tile: ln(x) times the fp32 factor 1/ln(base) the host passes.
inline float log_base_value(float x, const uint32_t* p) { return std::log(x) * as_float(p[0]); }
inline float signbit_value(float x, const uint32_t*) { return std::signbit(x) ? 1.0f : 0.0f; }
inline uint32_t signbit_int32_word(uint32_t x, const uint32_t*) { return x >> 31; }
inline float abs_value(float x, const uint32_t*) { return std::fabs(x); }
inline uint32_t abs_int32_word(uint32_t x, const uint32_t*) {
    const int32_t v = int32_t(x);
    return v < 0 ? uint32_t(0) - x : x;
}
// sign: +-1 with the input's sign, 0 for either zero.
inline float sign_value(float x, const uint32_t*) { return x == 0.0f ? 0.0f : std::copysign(1.0f, x); }
inline float power_value(float x, const uint32_t* p) { return std::pow(x, as_float(p[0])); }
// power_iterative_tile: x multiplied by itself (exponent - 1) times, x^0 = 1.
inline float power_iterative_value(float x, const uint32_t* p) {
    float r = 1.0f;
    for (uint32_t k = 0; k < p[0]; ++k) r *= x;
    return r;
}
inline float exp2_value(float x, const uint32_t*) { return std::exp2(x); }
inline float expm1_value(float x, const uint32_t*) { return std::expm1(x); }
// heaviside: 0 below zero, 1 above, the given value (fp32 bits) at either zero.
inline float heaviside_value(float x, const uint32_t* p) { return x == 0.0f ? as_float(p[0]) : (x < 0.0f ? 0.0f : 1.0f); }
inline float max_value(float x, const uint32_t* p) { return std::fmax(x, as_float(p[0])); }
inline float min_value(float x, const uint32_t* p) { return std::fmin(x, as_float(p[0])); }
inline uint32_t max_int32_word(uint32_t x, const uint32_t* p) { return int32_t(x) > int32_t(p[0]) ? x : p[0]; }
inline uint32_t min_int32_word(uint32_t x, const uint32_t* p) { return int32_t(x) < int32_t(p[0]) ? x : p[0]; }
inline uint32_t max_uint32_word(uint32_t x, const uint32_t* p) { return x > p[0] ? x : p[0]; }
inline uint32_t min_uint32_word(uint32_t x, const uint32_t* p) { return x < p[0] ? x : p[0]; }
}  // namespace ttsim::cka

namespace ckernel {

// ---- sigmoid / silu: an exp and a reciprocal each
template <bool fast_and_approx = false>
ALWI void sigmoid_tile_init() { ttsim::sfpu::setup("sigmoid"); }
template <VectorMode vec_mode = VectorMode::RC, bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sigmoid_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cka::sigmoid_value>("sigmoid_tile", "sigmoid", ttsim::cka::kSigmoidCost, idst, vec_mode);
}
ALWI void silu_tile_init() { ttsim::sfpu::setup("silu"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void silu_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cka::silu_value>("silu_tile", "silu", ttsim::cka::kSigmoidCost, idst);
}

// ---- tanh
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tanh_tile_init() { ttsim::sfpu::setup("tanh_tile_init"); }
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tanh_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cka::tanh_value>("tanh_tile", "tanh_tile_init", ttsim::sfpu_cost::kPolynomial, idst);
}

// ---- square
ALWI void square_tile_init() { ttsim::sfpu::setup("square_tile_init"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void square_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cka::square_value>("square_tile", "square_tile_init", ttsim::sfpu_cost::kSimple, idst);
}

// ---- log, log with a base
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log_tile_init() { ttsim::sfpu::setup("log_tile_init"); }
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cka::log_value>("log_tile", "log_tile_init", ttsim::sfpu_cost::kLog, idst);
}
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log_with_base_tile_init() { ttsim::sfpu::setup("log_with_base_tile_init"); }
template <bool fast_and_approx = false, bool base_is_two = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log_with_base_tile(uint32_t idst, uint32_t base_scale) {
    ttsim::sfpu::unary<ttsim::cka::log_base_value>("log_with_base_tile", "log_with_base_tile_init",
                                                   ttsim::sfpu_cost::kLog + ttsim::sfpu_cost::kSimple, idst,
                                                   VectorMode::RC, base_scale);
}

// ---- sign bit, abs, sign
ALWI void signbit_tile_init() { ttsim::sfpu::setup("signbit_tile_init"); }
ALWI void signbit_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cka::signbit_value>("signbit_tile", "signbit_tile_init", ttsim::sfpu_cost::kSimple, idst);
}
ALWI void signbit_tile_int32_init() { ttsim::sfpu::setup("signbit_tile_int32_init"); }
ALWI void signbit_tile_int32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::cka::signbit_int32_word>("signbit_tile_int32", "signbit_tile_int32_init",
                                                             ttsim::sfpu_cost::kSimple, idst);
}
ALWI void abs_tile_init() { ttsim::sfpu::setup("abs_tile_init"); }
ALWI void abs_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cka::abs_value>("abs_tile", "abs_tile_init", ttsim::sfpu_cost::kSimple, idst);
}
ALWI void abs_tile_int32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::cka::abs_int32_word>("abs_tile_int32", "abs_tile_init", ttsim::sfpu_cost::kSimple, idst);
}
ALWI void sign_tile_init() { ttsim::sfpu::setup("sign_tile_init"); }
ALWI void sign_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cka::sign_value>("sign_tile", "sign_tile_init", ttsim::sfpu_cost::kSimple, idst);
}

// ---- powers and exponentials
ALWI void power_tile_init() { ttsim::sfpu::setup("power_tile_init"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void power_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::cka::power_value>("power_tile", "power_tile_init",
                                                ttsim::sfpu_cost::kLog + ttsim::sfpu_cost::kExp, idst, VectorMode::RC, param0);
}
ALWI void power_iterative_tile_init() { ttsim::sfpu::setup("power_iterative_tile_init"); }
ALWI void power_iterative_tile(uint32_t idst, uint32_t param0) {
    // One multiply pass per factor.
    ttsim::sfpu::unary<ttsim::cka::power_iterative_value>("power_iterative_tile", "power_iterative_tile_init",
                                                          ttsim::sfpu_cost::kSimple * (param0 > 1 ? param0 : 1), idst,
                                                          VectorMode::RC, param0);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp2_tile_init() { ttsim::sfpu::setup("exp2_tile_init"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp2_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cka::exp2_value>("exp2_tile", "exp2_tile_init", ttsim::sfpu_cost::kExp, idst);
}
template <bool approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void expm1_tile_init() { ttsim::sfpu::setup("expm1_tile_init"); }
template <bool approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void expm1_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cka::expm1_value>("expm1_tile", "expm1_tile_init", ttsim::sfpu_cost::kExp, idst);
}
ALWI void heaviside_tile_init() { ttsim::sfpu::setup("heaviside_tile_init"); }
ALWI void heaviside_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::cka::heaviside_value>("heaviside_tile", "heaviside_tile_init", ttsim::sfpu_cost::kSimple,
                                                    idst, VectorMode::RC, param0);
}

// ---- max / min with a scalar (fp32 bits, or the integer for the int32 / uint32 forms)
ALWI void unary_max_tile_init() { ttsim::sfpu::setup("unary_max_tile_init"); }
ALWI void unary_max_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::cka::max_value>("unary_max_tile", "unary_max_tile_init", ttsim::sfpu_cost::kSimple, idst,
                                              VectorMode::RC, param0);
}
ALWI void unary_max_int32_tile_init() { ttsim::sfpu::setup("unary_max_int32_tile_init"); }
ALWI void unary_max_int32_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::cka::max_int32_word>("unary_max_int32_tile", "unary_max_int32_tile_init",
                                                         ttsim::sfpu_cost::kSimple, idst, true, param0);
}
ALWI void unary_max_uint32_tile_init() { ttsim::sfpu::setup("unary_max_uint32_tile_init"); }
ALWI void unary_max_uint32_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::cka::max_uint32_word>("unary_max_uint32_tile", "unary_max_uint32_tile_init",
                                                          ttsim::sfpu_cost::kSimple, idst, true, param0);
}
ALWI void unary_min_tile_init() { ttsim::sfpu::setup("unary_min_tile_init"); }
ALWI void unary_min_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::cka::min_value>("unary_min_tile", "unary_min_tile_init", ttsim::sfpu_cost::kSimple, idst,
                                              VectorMode::RC, param0);
}
ALWI void unary_min_int32_tile_init() { ttsim::sfpu::setup("unary_min_int32_tile_init"); }
ALWI void unary_min_int32_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::cka::min_int32_word>("unary_min_int32_tile", "unary_min_int32_tile_init",
                                                         ttsim::sfpu_cost::kSimple, idst, true, param0);
}
ALWI void unary_min_uint32_tile_init() { ttsim::sfpu::setup("unary_min_uint32_tile_init"); }
ALWI void unary_min_uint32_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::cka::min_uint32_word>("unary_min_uint32_tile", "unary_min_uint32_tile_init",
                                                          ttsim::sfpu_cost::kSimple, idst, true, param0);
}

// ---- declared only: each stops the run when called
template <bool fast_and_approx = false>
ALWI void sigmoid_tile_init_pack() { TTSIM_NOT_MODELED("sigmoid_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
template <VectorMode vec_mode = VectorMode::RC, bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sigmoid_tile_pack(uint32_t) { TTSIM_NOT_MODELED("sigmoid_tile_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tanh_tile_init_pack() { TTSIM_NOT_MODELED("tanh_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tanh_tile_pack(uint32_t) { TTSIM_NOT_MODELED("tanh_tile_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void silu_tile_pack(uint32_t) { TTSIM_NOT_MODELED("silu_tile_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
ALWI void silu_tile_init_pack() { TTSIM_NOT_MODELED("silu_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
ALWI void tiled_prod_tile_init() { TTSIM_NOT_MODELED("tiled_prod_tile_init", "a running product across tiles"); }
ALWI void tiled_prod_tile(uint32_t) { TTSIM_NOT_MODELED("tiled_prod_tile", "a running product across tiles"); }
template <PoolType pool_type, DataFormat format, ReduceDim reduce_dim = ReduceDim::REDUCE_COL,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_reduce(uint32_t, uint32_t ct_dim = 1, uint32_t rt_dim = 1) {
    TTSIM_NOT_MODELED("sfpu_reduce", "SFPU reductions inside DST");
}
template <PoolType pool_type, DataFormat format, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_reduce_init() { TTSIM_NOT_MODELED("sfpu_reduce_init", "SFPU reductions inside DST"); }
template <int num_rows = 9, ckernel::DataLayout layout = ckernel::DataLayout::TILE, bool accumulate = false,
          int ITERATIONS = 8, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void max_reduce_with_indices(uint32_t, uint32_t, uint32_t chunk = 0) {
    TTSIM_NOT_MODELED("max_reduce_with_indices", "max pooling with indices");
}
template <ckernel::DataLayout layout = ckernel::DataLayout::TILE>
ALWI void max_reduce_with_indices_init() { TTSIM_NOT_MODELED("max_reduce_with_indices_init", "max pooling with indices"); }
template <DataFormat format>
ALWI void sfpu_add_top_row(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("sfpu_add_top_row", "row moves inside DST"); }
ALWI void sfpu_add_top_row_init() { TTSIM_NOT_MODELED("sfpu_add_top_row_init", "row moves inside DST"); }
ALWI void alt_complex_rotate90_tile_init() { TTSIM_NOT_MODELED("alt_complex_rotate90_tile_init", "complex layouts"); }
ALWI void alt_complex_rotate90_tile(uint32_t) { TTSIM_NOT_MODELED("alt_complex_rotate90_tile", "complex layouts"); }
ALWI void dbg_halt() { TTSIM_NOT_MODELED("dbg_halt", "the debug halt of the math thread"); }
ALWI void dbg_unhalt() { TTSIM_NOT_MODELED("dbg_unhalt", "the debug halt of the math thread"); }
ALWI void dbg_read_dest_acc_row(int, uint32_t*) { TTSIM_NOT_MODELED("dbg_read_dest_acc_row", "debug reads of DST"); }
ALWI uint32_t get_compute_special_value_flags() {
    TTSIM_NOT_MODELED("get_compute_special_value_flags", "the FPU/SFPU special-value (NaN/inf) flag registers");
    return 0;
}
ALWI uint32_t get_compute_special_value_flags_fpu(uint32_t) {
    TTSIM_NOT_MODELED("get_compute_special_value_flags_fpu", "the FPU/SFPU special-value (NaN/inf) flag registers");
    return 0;
}
ALWI uint32_t get_compute_special_value_flags_sfpu(uint32_t) {
    TTSIM_NOT_MODELED("get_compute_special_value_flags_sfpu", "the FPU/SFPU special-value (NaN/inf) flag registers");
    return 0;
}
ALWI void clear_compute_special_value_flags() {
    TTSIM_NOT_MODELED("clear_compute_special_value_flags", "the FPU/SFPU special-value (NaN/inf) flag registers");
}

}  // namespace ckernel
