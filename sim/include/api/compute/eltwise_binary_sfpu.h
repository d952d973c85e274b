// Element-wise binary operations between two DST tiles on the SFPU (api/compute/eltwise_binary_sfpu.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

ALWI void div_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) { TTSIM->sfpu_binary(ttsim::SfpuOp::DivBinary, idst0, idst1, odst); }
ALWI void mul_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) { TTSIM->sfpu_binary(ttsim::SfpuOp::MulBinary, idst0, idst1, odst); }
ALWI void add_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) { TTSIM->sfpu_binary(ttsim::SfpuOp::AddBinary, idst0, idst1, odst); }
ALWI void sub_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) { TTSIM->sfpu_binary(ttsim::SfpuOp::SubBinary, idst0, idst1, odst); }
ALWI void div_binary_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::DivBinary); }
ALWI void mul_binary_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::MulBinary); }
ALWI void add_binary_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::AddBinary); }
ALWI void sub_binary_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::SubBinary); }
