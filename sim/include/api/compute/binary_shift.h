// Shifts of one DST tile's words by another's on the SFPU (api/compute/binary_shift.h): left, right
// (arithmetic for Int32, logical otherwise) and logical right; shift counts of 32 or more give 0 (or
// -1 for a negative Int32 shifted arithmetically), negative counts likewise. Exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::shift2 {
inline uint32_t count(uint32_t n) { return n >= 32 ? 32 : n; }
template <DataFormat f>
inline uint32_t left(uint32_t a, uint32_t n, const uint32_t*) {
    const uint32_t r = count(n) >= 32 ? 0 : a << n;
    return f == DataFormat::UInt16 ? (r & 0xFFFFu) : r;
}
template <DataFormat f>
inline uint32_t right(uint32_t a, uint32_t n, const uint32_t*) {
    if (f == DataFormat::Int32) return uint32_t(int32_t(a) >> (count(n) >= 32 ? 31 : n));
    return count(n) >= 32 ? 0 : a >> n;
}
template <DataFormat f>
inline uint32_t logical_right(uint32_t a, uint32_t n, const uint32_t*) { return count(n) >= 32 ? 0 : a >> n; }
constexpr uint64_t kCost = 4 * sfpu_cost::kPass;
}  // namespace ttsim::shift2

namespace ckernel {

ALWI void binary_shift_tile_init() { ttsim::sfpu::setup("binary_shift"); }
template <DataFormat data_format>
ALWI void binary_left_shift_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::shift2::left<data_format>>("binary_left_shift_tile", "binary_shift", ttsim::shift2::kCost,
                                                                idst0, idst1, odst);
}
template <DataFormat data_format>
ALWI void binary_right_shift_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::shift2::right<data_format>>("binary_right_shift_tile", "binary_shift",
                                                                 ttsim::shift2::kCost, idst0, idst1, odst);
}
template <DataFormat data_format>
ALWI void binary_logical_right_shift_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::shift2::logical_right<data_format>>("binary_logical_right_shift_tile", "binary_shift",
                                                                         ttsim::shift2::kCost, idst0, idst1, odst);
}

}  // namespace ckernel
