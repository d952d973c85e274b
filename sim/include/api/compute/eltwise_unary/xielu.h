// xIELU (api/compute/eltwise_unary/xielu.h): declared only.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ckernel {

ALWI void xielu_tile_init() { TTSIM_NOT_MODELED("xielu_tile_init", "xIELU (no reference formula taken from tt-llk yet)"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void xielu_tile(uint32_t, uint32_t, uint32_t) {
    TTSIM_NOT_MODELED("xielu_tile", "xIELU (no reference formula taken from tt-llk yet)");
}

}  // namespace ckernel
