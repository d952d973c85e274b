// The lgamma building blocks (api/compute/eltwise_unary/lgamma.h): declared only; their split of the
// computation across DST tiles is specific to tt-llk's kernels.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ckernel {

ALWI void lgamma_stirling_tile_init() { TTSIM_NOT_MODELED("lgamma_stirling_tile_init", "tt-llk's lgamma building blocks"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void lgamma_stirling_tile(uint32_t) { TTSIM_NOT_MODELED("lgamma_stirling_tile", "tt-llk's lgamma building blocks"); }
ALWI void lgamma_stirling_float_tile_init() {
    TTSIM_NOT_MODELED("lgamma_stirling_float_tile_init", "tt-llk's lgamma building blocks");
}
ALWI void lgamma_stirling_float_tile(uint32_t, uint32_t, uint32_t) {
    TTSIM_NOT_MODELED("lgamma_stirling_float_tile", "tt-llk's lgamma building blocks");
}
ALWI void lgamma_adjusted_tile_init() { TTSIM_NOT_MODELED("lgamma_adjusted_tile_init", "tt-llk's lgamma building blocks"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void lgamma_adjusted_tile(uint32_t, uint32_t, uint32_t, uint32_t) {
    TTSIM_NOT_MODELED("lgamma_adjusted_tile", "tt-llk's lgamma building blocks");
}

}  // namespace ckernel
