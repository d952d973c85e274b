// ELU on the SFPU, in place on a DST tile (api/compute/eltwise_unary/elu.h): x above zero, else
// alpha * (exp(x) - 1) with alpha as fp32 bits; fp32, C library.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::elu {
inline float value(float x, const uint32_t* p) { return x > 0.0f ? x : sfpu::as_float(p[0]) * std::expm1(x); }
}  // namespace ttsim::elu

namespace ckernel {

ALWI void elu_tile_init() { ttsim::sfpu::setup("elu"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void elu_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::elu::value>("elu_tile", "elu", ttsim::sfpu_cost::kExp + 2 * ttsim::sfpu_cost::kPass, idst,
                                          VectorMode::RC, param0);
}

}  // namespace ckernel
