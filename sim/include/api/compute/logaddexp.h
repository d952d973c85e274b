// log(exp(a) + exp(b)) of two DST tiles on the SFPU (api/compute/logaddexp.h): computed stably as
// max + log1p(exp(-|a - b|)) in fp32 with the C library. Cost: an exp and a log (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::logaddexp {
inline float natural(float a, float b, const uint32_t*) {
    if (a == b) return a + 0.69314718055994531f;  // equal infinities: the form below would give inf - inf
    const float m = std::fmax(a, b);
    return m + std::log1p(std::exp(-std::fabs(a - b)));
}
inline float base2(float a, float b, const uint32_t*) {
    if (a == b) return a + 1.0f;
    const float m = std::fmax(a, b);
    return m + std::log1p(std::exp2(-std::fabs(a - b))) * 1.44269504088896341f;
}
constexpr uint64_t kCost = sfpu_cost::kExp + sfpu_cost::kLog;
}  // namespace ttsim::logaddexp

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void logaddexp_binary_tile_init() { ttsim::sfpu::setup("logaddexp"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void logaddexp_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::logaddexp::natural>("logaddexp_binary_tile", "logaddexp", ttsim::logaddexp::kCost, idst0, idst1,
                                                   odst);
}

}  // namespace ckernel
