// SiTU-GLU of two DST tiles on the SFPU (api/compute/situ_glu.h): with the gate g (idst0) and up u
// (idst1), odst = 4 tanh(g / 4) sigmoid(g) * 25 tanh(u / 25), the compile-time betas tt-metal's header
// documents (4 and 25). fp32, C library. Cost: two tanh, an exp and a reciprocal (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::situ_glu {
inline float value(float g, float u, const uint32_t*) {
    constexpr float kBetaGate = 4.0f, kBetaUp = 25.0f;
    const float gate = kBetaGate * std::tanh(g / kBetaGate) / (1.0f + std::exp(-g));
    return gate * (kBetaUp * std::tanh(u / kBetaUp));
}
}  // namespace ttsim::situ_glu

namespace ckernel {

ALWI void situ_glu_tile_init() { ttsim::sfpu::setup("situ_glu"); }
ALWI void situ_glu_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC) {
    ttsim::sfpu::binary<ttsim::situ_glu::value>(
        "situ_glu_tile", "situ_glu", 2 * ttsim::sfpu_cost::kPolynomial + ttsim::sfpu_cost::kExp + ttsim::sfpu_cost::kRecip, idst0,
        idst1, odst, vector_mode);
}

}  // namespace ckernel
