// dropout (api/compute/eltwise_unary/dropout.h): declared only (the SFPU's pseudo-random generator).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ckernel {

ALWI void dropout_kernel_init(uint32_t seed = 0) { TTSIM_NOT_MODELED("dropout_kernel_init", "the SFPU's pseudo-random generator"); }
ALWI void dropout_tile(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("dropout_tile", "the SFPU's pseudo-random generator"); }

}  // namespace ckernel
