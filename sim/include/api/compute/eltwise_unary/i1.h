// Modified Bessel function of the first kind, order 1, on the SFPU (api/compute/eltwise_unary/i1.h):
// as i0.h.
#pragma once

#include "api/compute/eltwise_unary/i0.h"

namespace ckernel {

ALWI void i1_tile_init() { ttsim::sfpu::setup("i1"); }
ALWI void i1_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::bessel::i1>("i1_tile", "i1", ttsim::sfpu_cost::kPolynomial, idst); }

}  // namespace ckernel
