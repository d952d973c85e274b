// Multiply-accumulate on the SFPU (api/compute/eltwise_unary/mac.h): odst = a * b + c for DST tiles
// a (idst0), b (idst1), c (idst2), in fp32 (one fused multiply-add on the device too).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::mac {
inline float value(float a, float b, float c, const uint32_t*) { return std::fma(a, b, c); }
}  // namespace ttsim::mac

namespace ckernel {

template <DataFormat data_format>
ALWI void mac_tile_init() { ttsim::sfpu::setup("mac"); }
template <DataFormat data_format>
ALWI void mac_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst) {
    static_assert(data_format == DataFormat::Float32 || data_format == DataFormat::Float16_b, "mac_tile takes Float32 or Float16_b");
    ttsim::sfpu::ternary<ttsim::mac::value>("mac_tile", "mac", 5 * ttsim::sfpu_cost::kPass, idst0, idst1, idst2, odst);
}

}  // namespace ckernel
