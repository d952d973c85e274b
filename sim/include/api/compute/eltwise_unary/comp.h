// Comparisons on the SFPU, in place on a DST tile (api/compute/eltwise_unary/comp.h): 1 where the
// comparison holds, else 0 (1.0f / 0.0f for float data, the integers 1 / 0 for the integer forms).
// unary_<op>_tile compares with a scalar (fp32 bits, or the integer for *_int32); <op>z_tile with
// zero. Exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::comp {
using sfpu::as_float;
inline float ne(float x, const uint32_t* p) { return x != as_float(p[0]) ? 1.0f : 0.0f; }
inline uint32_t ne_int32(uint32_t x, const uint32_t* p) { return int32_t(x) != int32_t(p[0]) ? 1u : 0u; }
inline float eq(float x, const uint32_t* p) { return x == as_float(p[0]) ? 1.0f : 0.0f; }
inline uint32_t eq_int32(uint32_t x, const uint32_t* p) { return int32_t(x) == int32_t(p[0]) ? 1u : 0u; }
inline float gt(float x, const uint32_t* p) { return x > as_float(p[0]) ? 1.0f : 0.0f; }
inline uint32_t gt_int32(uint32_t x, const uint32_t* p) { return int32_t(x) > int32_t(p[0]) ? 1u : 0u; }
inline float ge(float x, const uint32_t* p) { return x >= as_float(p[0]) ? 1.0f : 0.0f; }
inline uint32_t ge_int32(uint32_t x, const uint32_t* p) { return int32_t(x) >= int32_t(p[0]) ? 1u : 0u; }
inline float lt(float x, const uint32_t* p) { return x < as_float(p[0]) ? 1.0f : 0.0f; }
inline uint32_t lt_int32(uint32_t x, const uint32_t* p) { return int32_t(x) < int32_t(p[0]) ? 1u : 0u; }
inline float le(float x, const uint32_t* p) { return x <= as_float(p[0]) ? 1.0f : 0.0f; }
inline uint32_t le_int32(uint32_t x, const uint32_t* p) { return int32_t(x) <= int32_t(p[0]) ? 1u : 0u; }
inline float gtz(float x, const uint32_t*) { return x > 0.0f ? 1.0f : 0.0f; }
inline uint32_t gtz_int32(uint32_t x, const uint32_t*) { return int32_t(x) > 0 ? 1u : 0u; }
inline float nez(float x, const uint32_t*) { return x != 0.0f ? 1.0f : 0.0f; }
inline uint32_t nez_int32(uint32_t x, const uint32_t*) { return int32_t(x) != 0 ? 1u : 0u; }
inline float gez(float x, const uint32_t*) { return x >= 0.0f ? 1.0f : 0.0f; }
inline uint32_t gez_int32(uint32_t x, const uint32_t*) { return int32_t(x) >= 0 ? 1u : 0u; }
inline float ltz(float x, const uint32_t*) { return x < 0.0f ? 1.0f : 0.0f; }
inline uint32_t ltz_int32(uint32_t x, const uint32_t*) { return int32_t(x) < 0 ? 1u : 0u; }
inline float eqz(float x, const uint32_t*) { return x == 0.0f ? 1.0f : 0.0f; }
inline uint32_t eqz_int32(uint32_t x, const uint32_t*) { return int32_t(x) == 0 ? 1u : 0u; }
inline float lez(float x, const uint32_t*) { return x <= 0.0f ? 1.0f : 0.0f; }
inline uint32_t lez_int32(uint32_t x, const uint32_t*) { return int32_t(x) <= 0 ? 1u : 0u; }
inline uint32_t eqz_uint(uint32_t x, const uint32_t*) { return x == 0 ? 1u : 0u; }
inline uint32_t nez_uint(uint32_t x, const uint32_t*) { return x != 0 ? 1u : 0u; }
// A load, a compare, a select and a store per row (estimate).
constexpr uint64_t kCost = 4 * sfpu_cost::kPass;
}  // namespace ttsim::comp

namespace ckernel {

ALWI void unary_ne_tile_init() { ttsim::sfpu::setup("unary_ne"); }
ALWI void unary_ne_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::comp::ne>("unary_ne_tile", "unary_ne", ttsim::comp::kCost, idst, VectorMode::RC, param0);
}
ALWI void unary_ne_tile_int32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::comp::ne_int32>("unary_ne_tile_int32", "unary_ne", ttsim::comp::kCost, idst, true, param0);
}
ALWI void unary_eq_tile_init() { ttsim::sfpu::setup("unary_eq"); }
ALWI void unary_eq_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::comp::eq>("unary_eq_tile", "unary_eq", ttsim::comp::kCost, idst, VectorMode::RC, param0);
}
ALWI void unary_eq_tile_int32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::comp::eq_int32>("unary_eq_tile_int32", "unary_eq", ttsim::comp::kCost, idst, true, param0);
}
ALWI void unary_gt_tile_init() { ttsim::sfpu::setup("unary_gt"); }
ALWI void unary_gt_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::comp::gt>("unary_gt_tile", "unary_gt", ttsim::comp::kCost, idst, VectorMode::RC, param0);
}
ALWI void unary_gt_tile_int32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::comp::gt_int32>("unary_gt_tile_int32", "unary_gt", ttsim::comp::kCost, idst, true, param0);
}
ALWI void unary_ge_tile_init() { ttsim::sfpu::setup("unary_ge"); }
ALWI void unary_ge_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::comp::ge>("unary_ge_tile", "unary_ge", ttsim::comp::kCost, idst, VectorMode::RC, param0);
}
ALWI void unary_ge_tile_int32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::comp::ge_int32>("unary_ge_tile_int32", "unary_ge", ttsim::comp::kCost, idst, true, param0);
}
ALWI void unary_lt_tile_init() { ttsim::sfpu::setup("unary_lt"); }
ALWI void unary_lt_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::comp::lt>("unary_lt_tile", "unary_lt", ttsim::comp::kCost, idst, VectorMode::RC, param0);
}
ALWI void unary_lt_tile_int32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::comp::lt_int32>("unary_lt_tile_int32", "unary_lt", ttsim::comp::kCost, idst, true, param0);
}
ALWI void unary_le_tile_init() { ttsim::sfpu::setup("unary_le"); }
ALWI void unary_le_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::comp::le>("unary_le_tile", "unary_le", ttsim::comp::kCost, idst, VectorMode::RC, param0);
}
ALWI void unary_le_tile_int32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::comp::le_int32>("unary_le_tile_int32", "unary_le", ttsim::comp::kCost, idst, true, param0);
}
ALWI void gtz_tile_init() { ttsim::sfpu::setup("gtz"); }
ALWI void gtz_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::comp::gtz>("gtz_tile", "gtz", ttsim::comp::kCost, idst); }
ALWI void gtz_tile_int32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::comp::gtz_int32>("gtz_tile_int32", "gtz", ttsim::comp::kCost, idst);
}
ALWI void nez_tile_init() { ttsim::sfpu::setup("nez"); }
ALWI void nez_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::comp::nez>("nez_tile", "nez", ttsim::comp::kCost, idst); }
ALWI void nez_tile_int32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::comp::nez_int32>("nez_tile_int32", "nez", ttsim::comp::kCost, idst);
}
ALWI void gez_tile_init() { ttsim::sfpu::setup("gez"); }
ALWI void gez_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::comp::gez>("gez_tile", "gez", ttsim::comp::kCost, idst); }
ALWI void gez_tile_int32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::comp::gez_int32>("gez_tile_int32", "gez", ttsim::comp::kCost, idst);
}
ALWI void ltz_tile_init() { ttsim::sfpu::setup("ltz"); }
ALWI void ltz_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::comp::ltz>("ltz_tile", "ltz", ttsim::comp::kCost, idst); }
ALWI void ltz_tile_int32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::comp::ltz_int32>("ltz_tile_int32", "ltz", ttsim::comp::kCost, idst);
}
ALWI void eqz_tile_init() { ttsim::sfpu::setup("eqz"); }
ALWI void eqz_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::comp::eqz>("eqz_tile", "eqz", ttsim::comp::kCost, idst); }
ALWI void eqz_tile_int32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::comp::eqz_int32>("eqz_tile_int32", "eqz", ttsim::comp::kCost, idst);
}
ALWI void lez_tile_init() { ttsim::sfpu::setup("lez"); }
ALWI void lez_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::comp::lez>("lez_tile", "lez", ttsim::comp::kCost, idst); }
ALWI void lez_tile_int32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::comp::lez_int32>("lez_tile_int32", "lez", ttsim::comp::kCost, idst);
}
ALWI void eqz_tile_uint16(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::comp::eqz_uint>("eqz_tile_uint16", "eqz", ttsim::comp::kCost, idst);
}
ALWI void eqz_tile_uint32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::comp::eqz_uint>("eqz_tile_uint32", "eqz", ttsim::comp::kCost, idst);
}
ALWI void nez_tile_uint16(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::comp::nez_uint>("nez_tile_uint16", "nez", ttsim::comp::kCost, idst);
}
ALWI void nez_tile_uint32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::comp::nez_uint>("nez_tile_uint32", "nez", ttsim::comp::kCost, idst);
}

}  // namespace ckernel
