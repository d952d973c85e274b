// Masking a DST tile by another (api/compute/mask.h): where the mask tile is 0 the data becomes 0
// (mask_tile) or +inf (mask_posinf_tile); elsewhere it is kept.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

ALWI void mask_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Mask); }
ALWI void mask_tile(uint32_t idst_data, uint32_t idst2_mask, DataFormat data_format = DataFormat::Float16_b) {
    (void)data_format;
    TTSIM->sfpu_binary(ttsim::SfpuOp::Mask, idst_data, idst2_mask, idst_data);
}
