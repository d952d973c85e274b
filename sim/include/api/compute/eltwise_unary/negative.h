// negative on the vector unit (SFPU), in place on a DST tile (api/compute/eltwise_unary/negative.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

ALWI void negative_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Negative); }
ALWI void negative_tile(uint32_t idst) { TTSIM->sfpu_unary(ttsim::SfpuOp::Negative, idst, 0, 0); }
