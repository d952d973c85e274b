// recip on the vector unit (SFPU), in place on a DST tile (api/compute/eltwise_unary/recip.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

template <bool legacy_compat = true>
ALWI void recip_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Recip); }
template <bool legacy_compat = true>
ALWI void recip_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC) {
    (void)vector_mode;
    TTSIM->sfpu_unary(ttsim::SfpuOp::Recip, idst, 0, 0);
}
