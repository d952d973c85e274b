// Element-wise binary operations between two DST tiles on the SFPU (api/compute/eltwise_binary_sfpu.h):
// odst = f(DST[idst0], DST[idst1]) in fp32: add, sub, mul, div (tt-llk multiplies by a reciprocal;
// the simulator divides, and charges the reciprocal), rsub (b - a), power (C library powf) and the
// comparisons (1.0f where they hold, else 0.0f).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

namespace ttsim::binary_sfpu {
inline float add(float a, float b, const uint32_t*) { return a + b; }
inline float sub(float a, float b, const uint32_t*) { return a - b; }
inline float mul(float a, float b, const uint32_t*) { return a * b; }
inline float div(float a, float b, const uint32_t*) { return a / b; }
inline float rsub(float a, float b, const uint32_t*) { return b - a; }
inline float power(float a, float b, const uint32_t*) { return std::pow(a, b); }
inline float eq(float a, float b, const uint32_t*) { return a == b ? 1.0f : 0.0f; }
inline float ne(float a, float b, const uint32_t*) { return a != b ? 1.0f : 0.0f; }
inline float lt(float a, float b, const uint32_t*) { return a < b ? 1.0f : 0.0f; }
inline float gt(float a, float b, const uint32_t*) { return a > b ? 1.0f : 0.0f; }
inline float le(float a, float b, const uint32_t*) { return a <= b ? 1.0f : 0.0f; }
inline float ge(float a, float b, const uint32_t*) { return a >= b ? 1.0f : 0.0f; }
// Two loads, a subtract, a compare, a select and a store per row (estimate).
constexpr uint64_t kCompare = 6 * sfpu_cost::kPass;
}  // namespace ttsim::binary_sfpu

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void div_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::div>("div_binary_tile", "div_binary", ttsim::sfpu_cost::kRecip, idst0, idst1, odst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::mul>("mul_binary_tile", "mul_binary", ttsim::sfpu_cost::kSimple, idst0, idst1, odst);
}
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::add>("add_binary_tile", "add_binary", ttsim::sfpu_cost::kSimple, idst0, idst1, odst);
}
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::sub>("sub_binary_tile", "sub_binary", ttsim::sfpu_cost::kSimple, idst0, idst1, odst);
}
ALWI void div_binary_tile_init() { ttsim::sfpu::setup("div_binary"); }
ALWI void mul_binary_tile_init() { ttsim::sfpu::setup("mul_binary"); }
ALWI void add_binary_tile_init() { ttsim::sfpu::setup("add_binary"); }
ALWI void sub_binary_tile_init() { ttsim::sfpu::setup("sub_binary"); }

ALWI void rsub_binary_tile_init() { ttsim::sfpu::setup("rsub_binary"); }
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rsub_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::rsub>("rsub_binary_tile", "rsub_binary", ttsim::sfpu_cost::kSimple, idst0, idst1,
                                                 odst);
}
ALWI void power_binary_tile_init() { ttsim::sfpu::setup("power_binary"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void power_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::power>("power_binary_tile", "power_binary",
                                                  ttsim::sfpu_cost::kLog + ttsim::sfpu_cost::kExp, idst0, idst1, odst);
}
ALWI void eq_binary_tile_init() { ttsim::sfpu::setup("eq_binary"); }
ALWI void eq_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::eq>("eq_binary_tile", "eq_binary", ttsim::binary_sfpu::kCompare, idst0, idst1, odst);
}
ALWI void ne_binary_tile_init() { ttsim::sfpu::setup("ne_binary"); }
ALWI void ne_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::ne>("ne_binary_tile", "ne_binary", ttsim::binary_sfpu::kCompare, idst0, idst1, odst);
}
ALWI void lt_binary_tile_init() { ttsim::sfpu::setup("lt_binary"); }
ALWI void lt_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::lt>("lt_binary_tile", "lt_binary", ttsim::binary_sfpu::kCompare, idst0, idst1, odst);
}
ALWI void gt_binary_tile_init() { ttsim::sfpu::setup("gt_binary"); }
ALWI void gt_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::gt>("gt_binary_tile", "gt_binary", ttsim::binary_sfpu::kCompare, idst0, idst1, odst);
}
ALWI void le_binary_tile_init() { ttsim::sfpu::setup("le_binary"); }
ALWI void le_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::le>("le_binary_tile", "le_binary", ttsim::binary_sfpu::kCompare, idst0, idst1, odst);
}
ALWI void ge_binary_tile_init() { ttsim::sfpu::setup("ge_binary"); }
ALWI void ge_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::binary_sfpu::ge>("ge_binary_tile", "ge_binary", ttsim::binary_sfpu::kCompare, idst0, idst1, odst);
}

}  // namespace ckernel
