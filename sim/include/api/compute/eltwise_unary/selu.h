// SELU on the SFPU, in place on a DST tile (api/compute/eltwise_unary/selu.h):
// scale * (x above zero, else alpha * (exp(x) - 1)), scale and alpha as fp32 bits; fp32, C library.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::selu {
inline float value(float x, const uint32_t* p) {
    return sfpu::as_float(p[0]) * (x > 0.0f ? x : sfpu::as_float(p[1]) * std::expm1(x));
}
}  // namespace ttsim::selu

namespace ckernel {

ALWI void selu_tile_init() { ttsim::sfpu::setup("selu"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void selu_tile(uint32_t idst, uint32_t scale, uint32_t alpha) {
    ttsim::sfpu::unary<ttsim::selu::value>("selu_tile", "selu", ttsim::sfpu_cost::kExp + 3 * ttsim::sfpu_cost::kPass, idst,
                                           VectorMode::RC, scale, alpha);
}
ALWI void selu_tile_init_pack() { TTSIM_NOT_MODELED("selu_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void selu_tile_pack(uint32_t, uint32_t, uint32_t) {
    TTSIM_NOT_MODELED("selu_tile_pack", "the pack thread runs only exp (exp_packthread_tile)");
}

}  // namespace ckernel
