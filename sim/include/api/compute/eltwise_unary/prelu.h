// PReLU with a scalar slope on the SFPU, in place on a DST tile (api/compute/eltwise_unary/prelu.h):
// x, or slope * x below zero (slope as fp32 bits). Exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::prelu {
inline float value(float x, const uint32_t* p) { return x < 0.0f ? x * sfpu::as_float(p[0]) : x; }
}  // namespace ttsim::prelu

namespace ckernel {

ALWI void prelu_tile_init() { ttsim::sfpu::setup("prelu"); }
ALWI void prelu_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::prelu::value>("prelu_tile", "prelu", 3 * ttsim::sfpu_cost::kPass, idst, VectorMode::RC, param0);
}

}  // namespace ckernel
