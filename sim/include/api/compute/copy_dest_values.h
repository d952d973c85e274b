// Copy one DST tile to another on the SFPU (api/compute/copy_dest_values.h): a simple SFPU pass over
// the tile, exact in any DST format.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

template <DataFormat DATA_FORMAT>
ALWI void copy_dest_values(uint32_t idst_in, uint32_t idst_out) {
    TTSIM->sfpu_binary(ttsim::SfpuOp::CopyDest, idst_in, idst_in, idst_out);
}
ALWI void copy_dest_values_init() { TTSIM->sfpu_init(ttsim::SfpuOp::CopyDest); }
