// Rounding on the SFPU, in place on a DST tile (api/compute/eltwise_unary/rounding.h): ceil, floor,
// trunc, frac (x - trunc(x)) and round to `decimals` places (half to even, as torch.round). Exact for
// the integral ones; round scales by 10^decimals in double. stochastic_round_tile is declared only.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::rounding {
inline float ceil(float x, const uint32_t*) { return std::ceil(x); }
inline float floor(float x, const uint32_t*) { return std::floor(x); }
inline float trunc(float x, const uint32_t*) { return std::trunc(x); }
inline float frac(float x, const uint32_t*) { return x - std::trunc(x); }
inline float round(float x, const uint32_t* p) {
    const double scale = std::pow(10.0, double(int32_t(p[0])));
    return float(std::nearbyint(double(x) * scale) / scale);
}
constexpr uint64_t kCost = 6 * sfpu_cost::kPass;
}  // namespace ttsim::rounding

namespace ckernel {

ALWI void rounding_op_tile_init() { ttsim::sfpu::setup("rounding"); }
ALWI void ceil_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::rounding::ceil>("ceil_tile", "rounding", ttsim::rounding::kCost, idst); }
ALWI void floor_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::rounding::floor>("floor_tile", "rounding", ttsim::rounding::kCost, idst);
}
ALWI void trunc_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::rounding::trunc>("trunc_tile", "rounding", ttsim::rounding::kCost, idst);
}
ALWI void frac_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::rounding::frac>("frac_tile", "rounding", ttsim::rounding::kCost, idst); }
ALWI void round_tile(uint32_t idst, int32_t decimals) {
    ttsim::sfpu::unary<ttsim::rounding::round>("round_tile", "rounding", 2 * ttsim::rounding::kCost, idst, VectorMode::RC,
                                               uint32_t(decimals));
}
ALWI void stochastic_round_tile(uint32_t) { TTSIM_NOT_MODELED("stochastic_round_tile", "the SFPU's random rounding"); }

}  // namespace ckernel
