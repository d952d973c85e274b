// log(sigmoid(x)) on the SFPU (api/compute/logsigmoid.h): idst_in0 holds x and idst_in1 exp(-x), as
// tt-metal's logsigmoid kernel prepares them; the simulator computes -log1p(exp(-x)) from x alone in
// fp32 (stable for large |x|). Cost: a log and a polynomial (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::logsigmoid {
inline float value(float x, float, const uint32_t*) {
    return x < 0.0f ? x - std::log1p(std::exp(x)) : -std::log1p(std::exp(-x));
}
}  // namespace ttsim::logsigmoid

namespace ckernel {

ALWI void logsigmoid_tile_init() { ttsim::sfpu::setup("logsigmoid"); }
ALWI void logsigmoid_tile(uint32_t idst_in0, uint32_t idst_in1, uint32_t idst_out) {
    ttsim::sfpu::binary<ttsim::logsigmoid::value>("logsigmoid_tile", "logsigmoid",
                                                  ttsim::sfpu_cost::kLog + ttsim::sfpu_cost::kPolynomial, idst_in0, idst_in1,
                                                  idst_out);
}

}  // namespace ckernel
