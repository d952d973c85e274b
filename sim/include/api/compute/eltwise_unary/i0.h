// Modified Bessel function of the first kind, order 0, on the SFPU (api/compute/eltwise_unary/i0.h):
// the C++ library's cyl_bessel_i in double, rounded to fp32 (tt-llk sums a series). Cost: a polynomial.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::bessel {
inline float i0(float x, const uint32_t*) { return float(std::cyl_bessel_i(0.0, std::fabs(double(x)))); }
// I1 is odd.
inline float i1(float x, const uint32_t*) { return float(std::copysign(std::cyl_bessel_i(1.0, std::fabs(double(x))), double(x))); }
}  // namespace ttsim::bessel

namespace ckernel {

ALWI void i0_tile_init() { ttsim::sfpu::setup("i0"); }
ALWI void i0_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::bessel::i0>("i0_tile", "i0", ttsim::sfpu_cost::kPolynomial, idst); }

}  // namespace ckernel
