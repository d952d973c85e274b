// fmod by a scalar on the SFPU, in place on a DST tile (api/compute/eltwise_unary/fmod.h): the
// remainder of x / value with x's sign. The init takes the value and its reciprocal (fp32 bits);
// the simulator uses the C library's fmodf on the value (exact). Cost: a reciprocal's worth plus
// a few passes (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::fmod {
inline float value(float x, const uint32_t* p) { return std::fmod(x, sfpu::as_float(p[4])); }
}  // namespace ttsim::fmod

namespace ckernel {

ALWI void fmod_tile_init(uint32_t param0, uint32_t param1) { ttsim::sfpu::setup("fmod", param0, param1); }
ALWI void fmod_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::fmod::value>("fmod_tile", "fmod", ttsim::sfpu_cost::kRecip + 4 * ttsim::sfpu_cost::kPass, idst);
}

}  // namespace ckernel
