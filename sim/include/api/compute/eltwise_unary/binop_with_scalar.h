// binary operations with a scalar (fp32 bits) on the vector unit (SFPU), in place on a DST tile (api/compute/eltwise_unary/binop_with_scalar.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

ALWI void add_unary_tile(uint32_t idst, uint32_t param1) { TTSIM->sfpu_unary(ttsim::SfpuOp::AddScalar, idst, param1, 0); }
ALWI void sub_unary_tile(uint32_t idst, uint32_t param1) { TTSIM->sfpu_unary(ttsim::SfpuOp::SubScalar, idst, param1, 0); }
ALWI void mul_unary_tile(uint32_t idst, uint32_t param1) { TTSIM->sfpu_unary(ttsim::SfpuOp::MulScalar, idst, param1, 0); }
ALWI void div_unary_tile(uint32_t idst, uint32_t param1) { TTSIM->sfpu_unary(ttsim::SfpuOp::DivScalar, idst, param1, 0); }
ALWI void rsub_unary_tile(uint32_t idst, uint32_t param1) { TTSIM->sfpu_unary(ttsim::SfpuOp::RsubScalar, idst, param1, 0); }
ALWI void binop_with_scalar_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::MulScalar); }
