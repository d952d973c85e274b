// The SFPU activations declared in api/compute/compute_kernel_api.h that our kernels use.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"

template <bool fast_and_approx = false>
ALWI void sigmoid_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Sigmoid); }
template <VectorMode vec_mode = VectorMode::RC, bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sigmoid_tile(uint32_t idst) { TTSIM->sfpu_unary(ttsim::SfpuOp::Sigmoid, idst, 0, 0); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void silu_tile(uint32_t idst) { TTSIM->sfpu_unary(ttsim::SfpuOp::Silu, idst, 0, 0); }
ALWI void silu_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Silu); }
