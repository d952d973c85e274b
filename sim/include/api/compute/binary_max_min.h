// Element-wise max / min of two DST tiles on the SFPU (api/compute/binary_max_min.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

ALWI void binary_max_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC) {
    (void)vector_mode;
    TTSIM->sfpu_binary(ttsim::SfpuOp::Max, idst0, idst1, odst);
}
ALWI void binary_max_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Max); }
ALWI void binary_min_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC) {
    (void)vector_mode;
    TTSIM->sfpu_binary(ttsim::SfpuOp::Min, idst0, idst1, odst);
}
ALWI void binary_min_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Min); }
