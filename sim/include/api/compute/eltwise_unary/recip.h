// Reciprocal on the SFPU, in place on a DST tile (api/compute/eltwise_unary/recip.h): 1 / x in fp32
// (tt-llk iterates Newton's method to within bf16 / fp32 resolution). Cost: the reciprocal figure.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

namespace ckernel {
enum class ReciprocalDestAcc { BF16, FP32 };
}  // namespace ckernel
namespace ckernel {
enum class ReciprocalApproxMode { Default, Precise, Approximate };
}  // namespace ckernel

namespace ttsim::recip {
inline float value(float x, const uint32_t*) { return 1.0f / x; }
}  // namespace ttsim::recip

namespace ckernel {

template <ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
          ReciprocalApproxMode approximation = ReciprocalApproxMode::Default>
ALWI void recip_tile_init() {
    ttsim::sfpu::setup("reciprocal");
}
template <ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
          ReciprocalApproxMode approximation = ReciprocalApproxMode::Default>
ALWI void recip_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC) {
    ttsim::sfpu::unary<ttsim::recip::value>("recip_tile", "reciprocal", ttsim::sfpu_cost::kRecip, idst, vector_mode);
}

}  // namespace ckernel
