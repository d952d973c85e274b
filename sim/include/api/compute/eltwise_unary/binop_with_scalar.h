// Arithmetic with a scalar on the SFPU, in place on a DST tile (api/compute/eltwise_unary/binop_with_scalar.h):
// x + s, x - s, x * s, x / s, s - x with s as fp32 bits (in fp32; tt-llk's division multiplies by
// the reciprocal, the simulator divides), and the Int32 add / sub with s as an integer.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::scalar_op {
using sfpu::as_float;
inline float add(float x, const uint32_t* p) { return x + as_float(p[0]); }
inline float sub(float x, const uint32_t* p) { return x - as_float(p[0]); }
inline float mul(float x, const uint32_t* p) { return x * as_float(p[0]); }
inline float div(float x, const uint32_t* p) { return x / as_float(p[0]); }
inline float rsub(float x, const uint32_t* p) { return as_float(p[0]) - x; }
inline uint32_t add_int32(uint32_t x, const uint32_t* p) { return x + p[0]; }
inline uint32_t sub_int32(uint32_t x, const uint32_t* p) { return x - p[0]; }
}  // namespace ttsim::scalar_op

namespace ckernel {

// The binop modes (tt-metal's numbering), which kernels pass to calculate_binop_with_scalar.
enum { ADD_UNARY = 0, SUB_UNARY = 1, MUL_UNARY = 2, DIV_UNARY = 3, RSUB_UNARY = 4 };

ALWI void binop_with_scalar_tile_init() { ttsim::sfpu::setup("binop_with_scalar"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_unary_tile(uint32_t idst, uint32_t param1) {
    ttsim::sfpu::unary<ttsim::scalar_op::add>("add_unary_tile", "binop_with_scalar", ttsim::sfpu_cost::kSimple, idst,
                                              VectorMode::RC, param1);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_unary_tile(uint32_t idst, uint32_t param1) {
    ttsim::sfpu::unary<ttsim::scalar_op::sub>("sub_unary_tile", "binop_with_scalar", ttsim::sfpu_cost::kSimple, idst,
                                              VectorMode::RC, param1);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_unary_tile(uint32_t idst, uint32_t param1) {
    ttsim::sfpu::unary<ttsim::scalar_op::mul>("mul_unary_tile", "binop_with_scalar", ttsim::sfpu_cost::kSimple, idst,
                                              VectorMode::RC, param1);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void div_unary_tile(uint32_t idst, uint32_t param1) {
    ttsim::sfpu::unary<ttsim::scalar_op::div>("div_unary_tile", "binop_with_scalar", ttsim::sfpu_cost::kRecip, idst,
                                              VectorMode::RC, param1);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rsub_unary_tile(uint32_t idst, uint32_t param1) {
    ttsim::sfpu::unary<ttsim::scalar_op::rsub>("rsub_unary_tile", "binop_with_scalar", ttsim::sfpu_cost::kSimple, idst,
                                               VectorMode::RC, param1);
}
ALWI void add_unary_tile_int32(uint32_t idst, uint32_t param1) {
    ttsim::sfpu::unary_words<ttsim::scalar_op::add_int32>("add_unary_tile_int32", "binop_with_scalar",
                                                          ttsim::sfpu_cost::kSimple, idst, true, param1);
}
ALWI void sub_unary_tile_int32(uint32_t idst, uint32_t param1) {
    ttsim::sfpu::unary_words<ttsim::scalar_op::sub_int32>("sub_unary_tile_int32", "binop_with_scalar",
                                                          ttsim::sfpu_cost::kSimple, idst, true, param1);
}

}  // namespace ckernel
