// rdiv on the SFPU: value / x for a scalar value, optionally truncated or floored, in place on a DST
// tile (api/compute/eltwise_unary/rdiv.h). tt-llk multiplies the value by x's reciprocal; the
// simulator divides in fp32 (a documented difference of at most an ulp or so); cost: a reciprocal
// and a multiply.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::rdiv {
template <RoundingMode mode>
inline float value(float x, const uint32_t* p) {
    const float q = sfpu::as_float(p[0]) / x;
    if constexpr (mode == RoundingMode::Trunc) return std::trunc(q);
    if constexpr (mode == RoundingMode::Floor) return std::floor(q);
    return q;
}
}  // namespace ttsim::rdiv

namespace ckernel {

ALWI void rdiv_tile_init() { ttsim::sfpu::setup("rdiv"); }
// value: the numerator as fp32 bits.
template <RoundingMode rounding_mode = RoundingMode::None, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rdiv_tile(uint32_t dst_index, uint32_t value, VectorMode vector_mode = VectorMode::RC) {
    ttsim::sfpu::unary<ttsim::rdiv::value<rounding_mode>>("rdiv_tile", "rdiv",
                                                          ttsim::sfpu_cost::kRecip + ttsim::sfpu_cost::kSimple, dst_index,
                                                          vector_mode, value);
}

}  // namespace ckernel
