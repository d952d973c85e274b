// Clamp to [low, high] on the SFPU, in place on a DST tile (api/compute/eltwise_unary/clamp.h): exact.
// Bounds are fp32 bits, or integers for clamp_tile_int32.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::clamp {
inline float value(float x, const uint32_t* p) { return std::fmin(std::fmax(x, sfpu::as_float(p[0])), sfpu::as_float(p[1])); }
inline uint32_t int32_word(uint32_t x, const uint32_t* p) {
    const int32_t v = int32_t(x), lo = int32_t(p[0]), hi = int32_t(p[1]);
    return uint32_t(v < lo ? lo : v > hi ? hi : v);
}
}  // namespace ttsim::clamp

namespace ckernel {

ALWI void clamp_tile_init() { ttsim::sfpu::setup("clamp"); }
ALWI void clamp_tile(uint32_t idst, uint32_t param0, uint32_t param1) {
    ttsim::sfpu::unary<ttsim::clamp::value>("clamp_tile", "clamp", 2 * ttsim::sfpu_cost::kPass, idst, VectorMode::RC, param0,
                                            param1);
}
ALWI void clamp_tile_int32(uint32_t idst, uint32_t param0, uint32_t param1) {
    ttsim::sfpu::unary_words<ttsim::clamp::int32_word>("clamp_tile_int32", "clamp", 2 * ttsim::sfpu_cost::kPass, idst, true,
                                                       param0, param1);
}

}  // namespace ckernel
