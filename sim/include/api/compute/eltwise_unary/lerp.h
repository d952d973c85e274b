// lerp on the SFPU (api/compute/eltwise_unary/lerp.h): odst = input + weight * (end - input) for DST
// tiles input (idst0), end (idst1) and weight (idst2), in fp32.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::lerp {
inline float value(float a, float b, float w, const uint32_t*) { return a + w * (b - a); }
}  // namespace ttsim::lerp

namespace ckernel {

ALWI void lerp_tile_init() { ttsim::sfpu::setup("lerp"); }
template <DataFormat data_format, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void lerp_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst) {
    ttsim::sfpu::ternary<ttsim::lerp::value>("lerp_tile", "lerp", 6 * ttsim::sfpu_cost::kPass, idst0, idst1, idst2, odst);
}

}  // namespace ckernel
