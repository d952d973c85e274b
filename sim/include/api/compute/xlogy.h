// x * log(y) of two DST tiles on the SFPU (api/compute/xlogy.h): 0 where x is 0 (unless y is NaN), fp32
// with the C library. Cost: a log and a multiply.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::xlogy {
inline float value(float x, float y, const uint32_t*) {
    if (std::isnan(y)) return y;
    return x == 0.0f ? 0.0f : x * std::log(y);
}
}  // namespace ttsim::xlogy

namespace ckernel {

ALWI void xlogy_binary_tile_init() { ttsim::sfpu::setup("xlogy"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void xlogy_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::xlogy::value>("xlogy_binary_tile", "xlogy", ttsim::sfpu_cost::kLog + ttsim::sfpu_cost::kPass,
                                             idst0, idst1, odst);
}

}  // namespace ckernel
