// exp on the vector unit (SFPU), in place on a DST tile (api/compute/eltwise_unary/exp.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

enum class InputClamping : uint8_t { ClampToNegative = 1, None = 0 };

// As in the pinned ttnn headers: `scale` (fp32 bits) is the factor the approximate path bakes in at init.
template <bool approx = false, uint32_t scale = 0x3F800000,
          InputClamping input_clamping = InputClamping::ClampToNegative, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_tile_init() {
    TTSIM->sfpu_init(ttsim::SfpuOp::Exp);
}
// The pack thread's exp (between tile_regs_wait and pack_tile): the SFPU work overlaps the math
// thread's next operations instead of following them.
template <bool approx = false, uint32_t scale = 0x3F800000,
          InputClamping input_clamping = InputClamping::ClampToNegative, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_packthread_tile_init() {
    TTSIM->sfpu_init_on_pack(ttsim::SfpuOp::Exp);
}
template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_packthread_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC,
                              uint16_t scale = p_sfpu::kCONST_1_FP16B) {
    TTSIM->sfpu_unary_on_pack(ttsim::SfpuOp::Exp, idst, scale_en ? uint32_t(scale) << 16 : 0x3F800000u, 0,
                              sfpu_faces(vector_mode));
}

// exp(x), or exp(scale * x) with scale_en (scale given as bf16 bits).
template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC, uint16_t scale = p_sfpu::kCONST_1_FP16B) {
    TTSIM->sfpu_unary(ttsim::SfpuOp::Exp, idst, scale_en ? uint32_t(scale) << 16 : 0x3F800000u, 0, sfpu_faces(vector_mode));
}
