// erf and erfc on the SFPU, in place on a DST tile (api/compute/eltwise_unary/erf_erfc.h): the C
// library's, in fp32 (tt-llk fits polynomials; a documented simulator difference). Cost: a polynomial.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::erf {
inline float erf_value(float x, const uint32_t*) { return std::erf(x); }
inline float erfc_value(float x, const uint32_t*) { return std::erfc(x); }
}  // namespace ttsim::erf

namespace ckernel {

template <bool fast_and_approx = true>
ALWI void erf_tile_init() { ttsim::sfpu::setup("erf"); }
template <bool fast_and_approx = true>
ALWI void erf_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::erf::erf_value>("erf_tile", "erf", ttsim::sfpu_cost::kPolynomial, idst);
}
ALWI void erfc_tile_init() { ttsim::sfpu::setup("erfc"); }
ALWI void erfc_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::erf::erfc_value>("erfc_tile", "erfc", ttsim::sfpu_cost::kPolynomial, idst);
}

}  // namespace ckernel
