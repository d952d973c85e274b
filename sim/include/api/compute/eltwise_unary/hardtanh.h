// hardtanh on the SFPU, in place on a DST tile (api/compute/eltwise_unary/hardtanh.h): x clamped to
// [min, max] (fp32 bits); exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::hardtanh {
inline float value(float x, const uint32_t* p) { return std::fmin(std::fmax(x, sfpu::as_float(p[0])), sfpu::as_float(p[1])); }
}  // namespace ttsim::hardtanh

namespace ckernel {

ALWI void hardtanh_tile_init() { ttsim::sfpu::setup("hardtanh"); }
ALWI void hardtanh_tile(uint32_t idst, uint32_t param0, uint32_t param1) {
    ttsim::sfpu::unary<ttsim::hardtanh::value>("hardtanh_tile", "hardtanh", 2 * ttsim::sfpu_cost::kPass, idst, VectorMode::RC,
                                               param0, param1);
}
ALWI void hardtanh_tile_init_pack() { TTSIM_NOT_MODELED("hardtanh_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
ALWI void hardtanh_tile_pack(uint32_t, uint32_t, uint32_t) {
    TTSIM_NOT_MODELED("hardtanh_tile_pack", "the pack thread runs only exp (exp_packthread_tile)");
}

}  // namespace ckernel
