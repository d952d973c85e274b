// Cube root on the SFPU, in place on a DST tile (api/compute/eltwise_unary/cbrt.h): the C library's
// cbrtf (tt-llk iterates from a bit-level estimate); cost: as a sqrt (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::cbrt {
inline float value(float x, const uint32_t*) { return std::cbrt(x); }
}  // namespace ttsim::cbrt

namespace ckernel {

ALWI void cbrt_tile_init() { ttsim::sfpu::setup("cbrt"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void cbrt_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::cbrt::value>("cbrt_tile", "cbrt", ttsim::sfpu_cost::kSqrt, idst);
}

}  // namespace ckernel
