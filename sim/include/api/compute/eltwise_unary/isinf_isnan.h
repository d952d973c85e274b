// Classification on the SFPU, in place on a DST tile (api/compute/eltwise_unary/isinf_isnan.h): 1.0f
// where the value is inf / +inf / -inf / NaN / finite, else 0.0f. Exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::classify {
inline float isinf(float x, const uint32_t*) { return std::isinf(x) ? 1.0f : 0.0f; }
inline float isposinf(float x, const uint32_t*) { return std::isinf(x) && x > 0.0f ? 1.0f : 0.0f; }
inline float isneginf(float x, const uint32_t*) { return std::isinf(x) && x < 0.0f ? 1.0f : 0.0f; }
inline float isnan(float x, const uint32_t*) { return std::isnan(x) ? 1.0f : 0.0f; }
inline float isfinite(float x, const uint32_t*) { return std::isfinite(x) ? 1.0f : 0.0f; }
constexpr uint64_t kCost = 4 * sfpu_cost::kPass;
}  // namespace ttsim::classify

namespace ckernel {

ALWI void isinf_tile_init() { ttsim::sfpu::setup("isinf"); }
ALWI void isinf_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::classify::isinf>("isinf_tile", "isinf", ttsim::classify::kCost, idst); }
ALWI void isposinf_tile_init() { ttsim::sfpu::setup("isposinf"); }
ALWI void isposinf_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::classify::isposinf>("isposinf_tile", "isposinf", ttsim::classify::kCost, idst);
}
ALWI void isneginf_tile_init() { ttsim::sfpu::setup("isneginf"); }
ALWI void isneginf_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::classify::isneginf>("isneginf_tile", "isneginf", ttsim::classify::kCost, idst);
}
ALWI void isnan_tile_init() { ttsim::sfpu::setup("isnan"); }
ALWI void isnan_tile(uint32_t idst) { ttsim::sfpu::unary<ttsim::classify::isnan>("isnan_tile", "isnan", ttsim::classify::kCost, idst); }
ALWI void isfinite_tile_init() { ttsim::sfpu::setup("isfinite"); }
ALWI void isfinite_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::classify::isfinite>("isfinite_tile", "isfinite", ttsim::classify::kCost, idst);
}

}  // namespace ckernel
