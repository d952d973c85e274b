// Set-up for unary operations (api/compute/eltwise_unary/eltwise_unary.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"

ALWI void unary_op_init_common(uint32_t icb, uint32_t ocb) { TTSIM->hw_startup(icb, icb, ocb); }
ALWI void init_sfpu(uint32_t icb, uint32_t ocb) {
    TTSIM->hw_startup(icb, icb, ocb);
    TTSIM->fpu_init(ttsim::FpuOp::Copy, ttsim::Bcast::None, icb, icb, 0);
}
