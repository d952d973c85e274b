// rpow on the SFPU: base ** x for a scalar base, in place on a DST tile (api/compute/eltwise_unary/rpow.h).
// Value: the C library's powf in fp32 (tt-llk goes through log2 and exp2); cost: a log and an exp (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::rpow {
inline float value(float x, const uint32_t* p) { return std::pow(sfpu::as_float(p[0]), x); }
}  // namespace ttsim::rpow

namespace ckernel {

ALWI void rpow_tile_init() { ttsim::sfpu::setup("rpow"); }
// base_val: the base as fp32 bits.
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rpow_tile(uint32_t idst, uint32_t base_val, VectorMode vector_mode = VectorMode::RC) {
    ttsim::sfpu::unary<ttsim::rpow::value>("rpow_tile", "rpow", ttsim::sfpu_cost::kLog + ttsim::sfpu_cost::kExp, idst,
                                           vector_mode, base_val);
}

}  // namespace ckernel
