// polygamma (api/compute/eltwise_unary/polygamma.h): declared only.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ckernel {

ALWI void polygamma_tile_init() { TTSIM_NOT_MODELED("polygamma_tile_init", "polygamma (no reference formula taken from tt-llk yet)"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void polygamma_tile(std::uint32_t, std::uint32_t, std::uint32_t) {
    TTSIM_NOT_MODELED("polygamma_tile", "polygamma (no reference formula taken from tt-llk yet)");
}

}  // namespace ckernel
