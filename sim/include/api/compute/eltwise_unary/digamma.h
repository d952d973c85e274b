// digamma (api/compute/eltwise_unary/digamma.h): declared only.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ckernel {

ALWI void digamma_tile_init() { TTSIM_NOT_MODELED("digamma_tile_init", "digamma (no reference formula taken from tt-llk yet)"); }
ALWI void digamma_tile(uint32_t) { TTSIM_NOT_MODELED("digamma_tile", "digamma (no reference formula taken from tt-llk yet)"); }

}  // namespace ckernel
