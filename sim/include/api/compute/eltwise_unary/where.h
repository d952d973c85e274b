// where on the SFPU (api/compute/eltwise_unary/where.h): odst = cond != 0 ? true_value : false_value
// for DST tiles cond (idst0), true (idst1) and false (idst2), element by element; exact. Float
// conditions compare as values (either zero is false), integer ones as words.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::where {
inline uint32_t float_cond(uint32_t c, uint32_t t, uint32_t f, const uint32_t*) { return sfpu::as_float(c) != 0.0f ? t : f; }
inline uint32_t word_cond(uint32_t c, uint32_t t, uint32_t f, const uint32_t*) { return c != 0 ? t : f; }
}  // namespace ttsim::where

namespace ckernel {

ALWI void where_tile_init() { ttsim::sfpu::setup("where"); }
template <DataFormat data_format>
ALWI void where_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst) {
    static_assert(data_format == DataFormat::Float32 || data_format == DataFormat::Float16_b ||
                      data_format == DataFormat::Int32 || data_format == DataFormat::UInt32,
                  "where_tile takes Float32, Float16_b, Int32 or UInt32");
    // Three loads, a compare, a select and a store per row (estimate: 6 passes).
    constexpr uint64_t cost = 6 * ttsim::sfpu_cost::kPass;
    if constexpr (data_format == DataFormat::Float32 || data_format == DataFormat::Float16_b) {
        ttsim::sfpu::ternary_words<ttsim::where::float_cond>("where_tile", "where", cost, idst0, idst1, idst2, odst, false);
    } else {
        ttsim::sfpu::ternary_words<ttsim::where::word_cond>("where_tile", "where", cost, idst0, idst1, idst2, odst, true);
    }
}

}  // namespace ckernel
