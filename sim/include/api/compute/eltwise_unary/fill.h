// fill on the vector unit (SFPU), in place on a DST tile (api/compute/eltwise_unary/fill.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

ALWI void fill_tile(uint32_t idst, float param0) {
    uint32_t bits;
    __builtin_memcpy(&bits, &param0, 4);
    TTSIM->sfpu_unary(ttsim::SfpuOp::Fill, idst, bits, 0);
}
ALWI void fill_tile_bitcast(uint32_t idst, uint32_t param0) { TTSIM->sfpu_unary(ttsim::SfpuOp::Fill, idst, param0, 0); }
ALWI void fill_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Fill); }
