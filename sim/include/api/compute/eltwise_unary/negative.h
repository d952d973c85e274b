// Negation on the SFPU, in place on a DST tile (api/compute/eltwise_unary/negative.h): exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::negative {
inline float value(float x, const uint32_t*) { return -x; }
inline uint32_t int32_word(uint32_t x, const uint32_t*) { return uint32_t(0) - x; }
}  // namespace ttsim::negative

namespace ckernel {

ALWI void negative_tile_init() { ttsim::sfpu::setup("negative"); }
ALWI void negative_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::negative::value>("negative_tile", "negative", ttsim::sfpu_cost::kSimple, idst);
}
ALWI void negative_tile_int32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::negative::int32_word>("negative_tile_int32", "negative", ttsim::sfpu_cost::kSimple, idst);
}

}  // namespace ckernel
