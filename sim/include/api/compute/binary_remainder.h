// remainder of two DST tiles on the SFPU (api/compute/binary_remainder.h): a - b * floor(a / b), the
// divisor's sign (torch.remainder); fp32 (NaN for a zero divisor), Int32 / UInt32 on words (0 for a
// zero divisor). Exact in fp32. Cost: a reciprocal plus a few passes (estimate).
#pragma once

#include <limits>

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::remainder2 {
inline float value(float a, float b, const uint32_t*) {
    if (b == 0.0f) return std::numeric_limits<float>::quiet_NaN();
    float r = std::fmod(a, b);
    if (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) r += b;
    return r;
}
inline uint32_t int32_words(uint32_t a, uint32_t b, const uint32_t*) {
    const int32_t x = int32_t(a), y = int32_t(b);
    if (y == 0 || y == -1) return 0;
    int32_t r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return uint32_t(r);
}
inline uint32_t uint32_words(uint32_t a, uint32_t b, const uint32_t*) { return b == 0 ? 0 : a % b; }
constexpr uint64_t kCost = sfpu_cost::kRecip + 6 * sfpu_cost::kPass;
}  // namespace ttsim::remainder2

namespace ckernel {

ALWI void remainder_binary_tile_init() { ttsim::sfpu::setup("remainder_binary"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void remainder_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::remainder2::value>("remainder_binary_tile", "remainder_binary", ttsim::remainder2::kCost, idst0,
                                                  idst1, odst);
}
ALWI void remainder_int32_tile_init() { ttsim::sfpu::setup("remainder_int32"); }
ALWI void remainder_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::remainder2::int32_words>("remainder_int32_tile", "remainder_int32",
                                                              ttsim::remainder2::kCost, idst0, idst1, odst);
}
ALWI void remainder_uint32_tile_init() { ttsim::sfpu::setup("remainder_uint32"); }
ALWI void remainder_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::remainder2::uint32_words>("remainder_uint32_tile", "remainder_uint32",
                                                               ttsim::remainder2::kCost, idst0, idst1, odst);
}

}  // namespace ckernel
