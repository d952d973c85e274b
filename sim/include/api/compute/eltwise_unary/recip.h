// recip on the vector unit (SFPU), in place on a DST tile (api/compute/eltwise_unary/recip.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

enum class ReciprocalDestAcc { BF16, FP32 };
enum class ReciprocalApproxMode { Default, Precise, Approximate };

template <ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
          ReciprocalApproxMode approximation = ReciprocalApproxMode::Default>
ALWI void recip_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Recip); }
template <ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
          ReciprocalApproxMode approximation = ReciprocalApproxMode::Default>
ALWI void recip_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC) {
    TTSIM->sfpu_unary(ttsim::SfpuOp::Recip, idst, 0, 0, sfpu_faces(vector_mode));
}
