// Masking a DST tile by another on the SFPU (api/compute/mask.h): where the mask is 0 the data becomes
// 0 (mask_tile) or +inf (mask_posinf_tile); elsewhere it is kept. Exact. As in tt-llk, the mask is the
// DST tile right after the data tile (the LLK reads it at a fixed offset of one tile); the mask index
// argument is not used, as on the device. An Int32 mask compares words, a float one values.
#pragma once

#include <limits>

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

namespace ttsim::mask {
inline float zero(float x, float m, const uint32_t*) { return m == 0.0f ? 0.0f : x; }
inline float posinf(float x, float m, const uint32_t*) { return m == 0.0f ? std::numeric_limits<float>::infinity() : x; }
inline uint32_t zero_int(uint32_t x, uint32_t m, const uint32_t*) { return m == 0 ? 0u : x; }
}  // namespace ttsim::mask

namespace ckernel {

ALWI void mask_tile_init() { ttsim::sfpu::setup("mask"); }
ALWI void mask_tile(uint32_t idst_data, uint32_t idst2_mask, DataFormat data_format = DataFormat::Float16_b) {
    (void)idst2_mask;
    if (data_format == DataFormat::Int32) {
        ttsim::sfpu::binary_words<ttsim::mask::zero_int>("mask_tile", "mask", ttsim::sfpu_cost::kSimple, idst_data,
                                                         idst_data + 1, idst_data, false);
    } else {
        ttsim::sfpu::binary<ttsim::mask::zero>("mask_tile", "mask", ttsim::sfpu_cost::kSimple, idst_data, idst_data + 1,
                                               idst_data);
    }
}
ALWI void mask_posinf_tile(uint32_t idst_data, uint32_t idst2_mask) {
    (void)idst2_mask;
    ttsim::sfpu::binary<ttsim::mask::posinf>("mask_posinf_tile", "mask", ttsim::sfpu_cost::kSimple, idst_data,
                                             idst_data + 1, idst_data);
}

}  // namespace ckernel
