// log(1 + x) on the SFPU, in place on a DST tile (api/compute/eltwise_unary/log1p.h): the C library's
// log1pf (tt-llk goes through log); cost: a log.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::log1p {
inline float value(float x, const uint32_t*) { return std::log1p(x); }
}  // namespace ttsim::log1p

namespace ckernel {

template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log1p_tile_init() { ttsim::sfpu::setup("log1p"); }
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log1p_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::log1p::value>("log1p_tile", "log1p", ttsim::sfpu_cost::kLog, idst);
}

}  // namespace ckernel
