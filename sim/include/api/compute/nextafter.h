// nextafter of two DST tiles on the SFPU (api/compute/nextafter.h): the next representable value after
// a in the direction of b, in fp32 (nextafter_binary_tile) or on the bf16 grid (nextafter_bf16_binary_tile,
// a taken as bf16). Exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::nextafter {
inline float fp32(float a, float b, const uint32_t*) { return std::nextafter(a, b); }
inline float bf16(float a, float b, const uint32_t*) {
    if (std::isnan(a) || std::isnan(b)) return a + b;
    if (a == b) return b;
    const uint32_t w = sfpu::as_word(a) & 0xFFFF0000u;
    if ((w & 0x7FFFFFFFu) == 0) return sfpu::as_float((b > 0.0f ? 0u : 0x80000000u) | 0x00010000u);
    const bool away = (b > a) == (a > 0.0f);
    return sfpu::as_float(away ? w + 0x10000u : w - 0x10000u);
}
constexpr uint64_t kCost = 8 * sfpu_cost::kPass;
}  // namespace ttsim::nextafter

namespace ckernel {

ALWI void nextafter_binary_tile_init() { ttsim::sfpu::setup("nextafter"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void nextafter_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::nextafter::fp32>("nextafter_binary_tile", "nextafter", ttsim::nextafter::kCost, idst0, idst1,
                                                odst);
}
ALWI void nextafter_bf16_binary_tile_init() { ttsim::sfpu::setup("nextafter_bf16"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void nextafter_bf16_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::nextafter::bf16>("nextafter_bf16_binary_tile", "nextafter_bf16", ttsim::nextafter::kCost, idst0,
                                                idst1, odst);
}

}  // namespace ckernel
