// rand (api/compute/eltwise_unary/rand.h): declared only (the SFPU's pseudo-random generator).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ckernel {

ALWI void rand_tile_init(uint32_t seed = 0, uint32_t stream_id = 0) {
    TTSIM_NOT_MODELED("rand_tile_init", "the SFPU's pseudo-random generator");
}
ALWI void rand_tile(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("rand_tile", "the SFPU's pseudo-random generator"); }

}  // namespace ckernel
