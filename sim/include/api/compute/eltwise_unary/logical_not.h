// Logical not on the SFPU, in place on a DST tile (api/compute/eltwise_unary/logical_not.h): 1 where
// the value is zero, else 0 (1.0f / 0.0f for float formats, integers for the integer ones). Exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::logical_not {
inline float value(float x, const uint32_t*) { return x == 0.0f ? 1.0f : 0.0f; }
inline uint32_t word(uint32_t x, const uint32_t*) { return x == 0 ? 1u : 0u; }
}  // namespace ttsim::logical_not

namespace ckernel {

ALWI void logical_not_tile_init() { ttsim::sfpu::setup("logical_not"); }
template <DataFormat DATA_FORMAT>
ALWI void logical_not_tile(uint32_t idst) {
    constexpr uint64_t cost = 4 * ttsim::sfpu_cost::kPass;
    if constexpr (DATA_FORMAT == DataFormat::Int32 || DATA_FORMAT == DataFormat::UInt32 || DATA_FORMAT == DataFormat::UInt16) {
        ttsim::sfpu::unary_words<ttsim::logical_not::word>("logical_not_tile", "logical_not", cost, idst);
    } else {
        ttsim::sfpu::unary<ttsim::logical_not::value>("logical_not_tile", "logical_not", cost, idst);
    }
}

}  // namespace ckernel
