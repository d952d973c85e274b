// Integer division of two Int32 DST tiles on the SFPU (api/compute/div_int32_floor.h): the quotient
// rounded toward minus infinity (floor) or zero (trunc), as an Int32; a zero divisor gives 0 and
// INT_MIN / -1 wraps to INT_MIN. Exact. Cost: as div_int32_tile (estimate).
#pragma once

#include "api/compute/div_int32_sfpu.h"

namespace ttsim::div_int32 {
inline uint32_t trunc(uint32_t a, uint32_t b, const uint32_t*) {
    const int64_t x = int32_t(a), y = int32_t(b);
    return y == 0 ? 0 : uint32_t(int64_t(x / y));
}
inline uint32_t floor(uint32_t a, uint32_t b, const uint32_t*) {
    const int64_t x = int32_t(a), y = int32_t(b);
    if (y == 0) return 0;
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return uint32_t(q);
}
}  // namespace ttsim::div_int32

namespace ckernel {

ALWI void div_int32_floor_tile_init() { ttsim::sfpu::setup("div_int32_floor"); }
ALWI void div_int32_floor_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::div_int32::floor>("div_int32_floor_tile", "div_int32_floor", ttsim::div_int32::kCost,
                                                       idst0, idst1, odst);
}
ALWI void div_int32_trunc_tile_init() { ttsim::sfpu::setup("div_int32_trunc"); }
ALWI void div_int32_trunc_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::div_int32::trunc>("div_int32_trunc_tile", "div_int32_trunc", ttsim::div_int32::kCost,
                                                       idst0, idst1, odst);
}

}  // namespace ckernel
