// Bitwise not of DST words on the SFPU (api/compute/eltwise_unary/bitwise_not.h): exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::bitwise_not {
inline uint32_t word(uint32_t x, const uint32_t*) { return ~x; }
}  // namespace ttsim::bitwise_not

namespace ckernel {

ALWI void bitwise_not_tile_init() { ttsim::sfpu::setup("bitwise_not"); }
ALWI void bitwise_not_tile(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::bitwise_not::word>("bitwise_not_tile", "bitwise_not", ttsim::sfpu_cost::kSimple, idst);
}

}  // namespace ckernel
