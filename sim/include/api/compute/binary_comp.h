// Integer comparisons of two DST tiles on the SFPU (api/compute/binary_comp.h): the integer 1 where
// the comparison holds, else 0; signed for Int32, unsigned for UInt32 / UInt16. Exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::int_comp {
template <DataFormat f>
constexpr bool is_signed() { return f == DataFormat::Int32; }
template <DataFormat f>
inline uint32_t eq(uint32_t a, uint32_t b, const uint32_t*) {
    return (is_signed<f>() ? int32_t(a) == int32_t(b) : a == b) ? 1u : 0u;
}
template <DataFormat f>
inline uint32_t ne(uint32_t a, uint32_t b, const uint32_t*) {
    return (is_signed<f>() ? int32_t(a) != int32_t(b) : a != b) ? 1u : 0u;
}
template <DataFormat f>
inline uint32_t lt(uint32_t a, uint32_t b, const uint32_t*) {
    return (is_signed<f>() ? int32_t(a) < int32_t(b) : a < b) ? 1u : 0u;
}
template <DataFormat f>
inline uint32_t gt(uint32_t a, uint32_t b, const uint32_t*) {
    return (is_signed<f>() ? int32_t(a) > int32_t(b) : a > b) ? 1u : 0u;
}
template <DataFormat f>
inline uint32_t le(uint32_t a, uint32_t b, const uint32_t*) {
    return (is_signed<f>() ? int32_t(a) <= int32_t(b) : a <= b) ? 1u : 0u;
}
template <DataFormat f>
inline uint32_t ge(uint32_t a, uint32_t b, const uint32_t*) {
    return (is_signed<f>() ? int32_t(a) >= int32_t(b) : a >= b) ? 1u : 0u;
}
// Two loads, a subtract, a compare, a select and a store per row (estimate).
constexpr uint64_t kCost = 6 * sfpu_cost::kPass;
}  // namespace ttsim::int_comp

namespace ckernel {

template <DataFormat data_format>
ALWI void eq_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::int_comp::eq<data_format>>("eq_int_tile", "eq_int", ttsim::int_comp::kCost, idst0, idst1,
                                                                 odst);
}
template <DataFormat data_format>
ALWI void eq_int_tile_init() {
    ttsim::sfpu::setup("eq_int");
}
template <DataFormat data_format>
ALWI void ne_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::int_comp::ne<data_format>>("ne_int_tile", "ne_int", ttsim::int_comp::kCost, idst0, idst1,
                                                                 odst);
}
template <DataFormat data_format>
ALWI void ne_int_tile_init() {
    ttsim::sfpu::setup("ne_int");
}
template <DataFormat data_format>
ALWI void lt_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::int_comp::lt<data_format>>("lt_int_tile", "lt_int", ttsim::int_comp::kCost, idst0, idst1,
                                                                 odst);
}
template <DataFormat data_format>
ALWI void lt_int_tile_init() {
    ttsim::sfpu::setup("lt_int");
}
template <DataFormat data_format>
ALWI void gt_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::int_comp::gt<data_format>>("gt_int_tile", "gt_int", ttsim::int_comp::kCost, idst0, idst1,
                                                                 odst);
}
template <DataFormat data_format>
ALWI void gt_int_tile_init() {
    ttsim::sfpu::setup("gt_int");
}
template <DataFormat data_format>
ALWI void le_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::int_comp::le<data_format>>("le_int_tile", "le_int", ttsim::int_comp::kCost, idst0, idst1,
                                                                 odst);
}
template <DataFormat data_format>
ALWI void le_int_tile_init() {
    ttsim::sfpu::setup("le_int");
}
template <DataFormat data_format>
ALWI void ge_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::int_comp::ge<data_format>>("ge_int_tile", "ge_int", ttsim::int_comp::kCost, idst0, idst1,
                                                                 odst);
}
template <DataFormat data_format>
ALWI void ge_int_tile_init() {
    ttsim::sfpu::setup("ge_int");
}

}  // namespace ckernel
