// Clamped SwiGLU of two DST tiles on the SFPU (api/compute/clamped_silu_glu.h): with the gate g
// (idst0) and up u (idst1) and the compile-time limit 10 that tt-metal's header documents,
// gc = min(g, 10), odst = gc * sigmoid(gc) * clamp(u, -10, 10). fp32, C library.
// Cost: an exp and a reciprocal (sigmoid) plus a few passes (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::clamped_silu_glu {
inline float value(float g, float u, const uint32_t*) {
    constexpr float kLimit = 10.0f;
    const float gc = std::fmin(g, kLimit);
    return gc / (1.0f + std::exp(-gc)) * std::fmin(std::fmax(u, -kLimit), kLimit);
}
}  // namespace ttsim::clamped_silu_glu

namespace ckernel {

ALWI void clamped_silu_glu_tile_init() { ttsim::sfpu::setup("clamped_silu_glu"); }
ALWI void clamped_silu_glu_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC) {
    ttsim::sfpu::binary<ttsim::clamped_silu_glu::value>("clamped_silu_glu_tile", "clamped_silu_glu",
                                                        ttsim::sfpu_cost::kExp + ttsim::sfpu_cost::kRecip +
                                                            4 * ttsim::sfpu_cost::kPass,
                                                        idst0, idst1, odst, vector_mode);
}

}  // namespace ckernel
