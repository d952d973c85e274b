// Reciprocal square root on the SFPU, in place on a DST tile (api/compute/eltwise_unary/rsqrt.h):
// 1 / sqrtf(x) in fp32. Cost: the sqrt figure.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

namespace ckernel {
enum class RsqrtMode { Default, Fast };
}  // namespace ckernel

namespace ttsim::rsqrt {
inline float value(float x, const uint32_t*) { return 1.0f / std::sqrt(x); }
}  // namespace ttsim::rsqrt

namespace ckernel {

ALWI void rsqrt_tile_init() { ttsim::sfpu::setup("rsqrt"); }
template <RsqrtMode mode = RsqrtMode::Default, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rsqrt_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::rsqrt::value>("rsqrt_tile", "rsqrt", ttsim::sfpu_cost::kSqrt, idst);
}

}  // namespace ckernel
