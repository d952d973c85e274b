// sqrt on the vector unit (SFPU), in place on a DST tile (api/compute/eltwise_unary/sqrt.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

ALWI void sqrt_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Sqrt); }
template <bool FAST_APPROX = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sqrt_tile(uint32_t idst) { TTSIM->sfpu_unary(ttsim::SfpuOp::Sqrt, idst, 0, 0); }
