// atan2 of two DST tiles on the SFPU (api/compute/atan2.h): atan2(DST[idst0], DST[idst1]), fp32 with
// the C library (tt-llk fits a polynomial). Cost: a polynomial and a reciprocal (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::atan2 {
inline float value(float y, float x, const uint32_t*) { return std::atan2(y, x); }
}  // namespace ttsim::atan2

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void atan2_binary_tile_init() { ttsim::sfpu::setup("atan2"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void atan2_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::atan2::value>("atan2_binary_tile", "atan2", ttsim::sfpu_cost::kPolynomial + ttsim::sfpu_cost::kRecip,
                                             idst0, idst1, odst);
}

}  // namespace ckernel
