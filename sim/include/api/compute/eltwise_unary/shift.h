// Shifts of DST words by a scalar on the SFPU (api/compute/eltwise_unary/shift.h): exact. Right shifts
// are arithmetic for Int32 and logical for the unsigned formats; a shift of 32 or more gives 0 (or -1
// for a negative Int32 shifted right).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::shift {
inline uint32_t left(uint32_t x, uint32_t n) { return n >= 32 ? 0 : x << n; }
inline uint32_t right(uint32_t x, uint32_t n, bool arithmetic) {
    if (arithmetic) return uint32_t(int32_t(x) >> (n >= 32 ? 31 : n));
    return n >= 32 ? 0 : x >> n;
}
template <DataFormat f>
inline uint32_t left_word(uint32_t x, const uint32_t* p) { return left(x, p[0]) & (f == DataFormat::UInt16 ? 0xFFFFu : ~0u); }
template <DataFormat f>
inline uint32_t right_word(uint32_t x, const uint32_t* p) { return right(x, p[0], f == DataFormat::Int32); }
}  // namespace ttsim::shift

namespace ckernel {

ALWI void left_shift_tile_init() { ttsim::sfpu::setup("left_shift"); }
ALWI void right_shift_tile_init() { ttsim::sfpu::setup("right_shift"); }
template <DataFormat data_format>
ALWI void left_shift_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::shift::left_word<data_format>>("left_shift_tile", "left_shift", ttsim::sfpu_cost::kSimple,
                                                                   idst, true, param0);
}
template <DataFormat data_format>
ALWI void right_shift_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::shift::right_word<data_format>>("right_shift_tile", "right_shift",
                                                                    ttsim::sfpu_cost::kSimple, idst, true, param0);
}

}  // namespace ckernel
