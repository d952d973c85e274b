// hard-mish on the SFPU, in place on a DST tile (api/compute/eltwise_unary/hardmish.h):
// x * clamp(x / 2 + 1, 0, 1), tt-llk's formula; exact in fp32.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::hardmish {
inline float value(float x, const uint32_t*) { return x * std::fmin(std::fmax(x * 0.5f + 1.0f, 0.0f), 1.0f); }
}  // namespace ttsim::hardmish

namespace ckernel {

ALWI void hardmish_tile_init() { ttsim::sfpu::setup("hardmish"); }
ALWI void hardmish_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::hardmish::value>("hardmish_tile", "hardmish", 4 * ttsim::sfpu_cost::kPass, idst);
}

}  // namespace ckernel
