// tanhshrink on the SFPU, in place on a DST tile (api/compute/eltwise_unary/tanhshrink.h): x - tanh(x),
// fp32 with the C library. Cost: a tanh and a pass (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::tanhshrink {
inline float value(float x, const uint32_t*) { return x - std::tanh(x); }
}  // namespace ttsim::tanhshrink

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tanhshrink_tile_init() { ttsim::sfpu::setup("tanhshrink"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tanhshrink_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::tanhshrink::value>("tanhshrink_tile", "tanhshrink",
                                                 ttsim::sfpu_cost::kPolynomial + ttsim::sfpu_cost::kPass, idst);
}

}  // namespace ckernel
