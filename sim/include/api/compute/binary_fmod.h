// fmod of two DST tiles on the SFPU (api/compute/binary_fmod.h): the remainder of a / b with a's sign;
// fp32 (C library fmodf) or Int32 (C++ %, 0 for a zero divisor). Cost: a reciprocal plus a few passes
// (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::fmod2 {
inline float value(float a, float b, const uint32_t*) { return std::fmod(a, b); }
inline uint32_t int32_words(uint32_t a, uint32_t b, const uint32_t*) {
    const int32_t x = int32_t(a), y = int32_t(b);
    if (y == 0) return 0;
    if (y == -1) return 0;
    return uint32_t(x % y);
}
constexpr uint64_t kCost = sfpu_cost::kRecip + 6 * sfpu_cost::kPass;
}  // namespace ttsim::fmod2

namespace ckernel {

ALWI void fmod_binary_tile_init() { ttsim::sfpu::setup("fmod_binary"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fmod_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::fmod2::value>("fmod_binary_tile", "fmod_binary", ttsim::fmod2::kCost, idst0, idst1, odst);
}
ALWI void fmod_int32_tile_init() { ttsim::sfpu::setup("fmod_int32"); }
ALWI void fmod_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::fmod2::int32_words>("fmod_int32_tile", "fmod_int32", ttsim::fmod2::kCost, idst0, idst1,
                                                         odst);
}

}  // namespace ckernel
