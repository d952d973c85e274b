// rsqrt on the vector unit (SFPU), in place on a DST tile (api/compute/eltwise_unary/rsqrt.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

enum class RsqrtMode { Default, Fast };

ALWI void rsqrt_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Rsqrt); }
template <RsqrtMode mode = RsqrtMode::Default, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rsqrt_tile(uint32_t idst) { TTSIM->sfpu_unary(ttsim::SfpuOp::Rsqrt, idst, 0, 0); }
