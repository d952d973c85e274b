// threshold on the SFPU, in place on a DST tile (api/compute/eltwise_unary/threshold.h): x where
// x > threshold, else value (both fp32 bits). Exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::threshold {
inline float value(float x, const uint32_t* p) { return x > sfpu::as_float(p[0]) ? x : sfpu::as_float(p[1]); }
}  // namespace ttsim::threshold

namespace ckernel {

ALWI void threshold_tile_init() { ttsim::sfpu::setup("threshold"); }
ALWI void threshold_tile(uint32_t idst, uint32_t param0, uint32_t param1) {
    ttsim::sfpu::unary<ttsim::threshold::value>("threshold_tile", "threshold", 3 * ttsim::sfpu_cost::kPass, idst,
                                                VectorMode::RC, param0, param1);
}

}  // namespace ckernel
