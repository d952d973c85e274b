// fill on the SFPU: every element of a DST tile set to one value (api/compute/eltwise_unary/fill.h).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::fill {
inline uint32_t word(uint32_t, const uint32_t* p) { return p[0]; }
inline uint32_t low16(uint32_t, const uint32_t* p) { return p[0] & 0xFFFFu; }
}  // namespace ttsim::fill

namespace ckernel {

ALWI void fill_tile_init() { ttsim::sfpu::setup("fill"); }
// A float value (rounded to bf16 in a 16-bit DST, like any float result).
ALWI void fill_tile(uint32_t idst, float param0) {
    ttsim::sfpu::unary_words<ttsim::fill::word>("fill_tile", "fill", ttsim::sfpu_cost::kSimple, idst, false,
                                                ttsim::sfpu::as_word(param0));
}
// The fp32 value whose bits param0 holds.
ALWI void fill_tile_bitcast(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::fill::word>("fill_tile_bitcast", "fill", ttsim::sfpu_cost::kSimple, idst, false,
                                                param0);
}
// An integer (UInt16: its low 16 bits).
template <DataFormat DATA_FORMAT>
ALWI void fill_tile_int(uint32_t idst, uint32_t param0) {
    static_assert(DATA_FORMAT == DataFormat::Int32 || is_uint32_format(DATA_FORMAT) || DATA_FORMAT == DataFormat::UInt16,
                  "fill_tile_int takes Int32, UInt32 or UInt16");
    if constexpr (DATA_FORMAT == DataFormat::UInt16) {
        ttsim::sfpu::unary_words<ttsim::fill::low16>("fill_tile_int", "fill", ttsim::sfpu_cost::kSimple, idst, true, param0);
    } else {
        ttsim::sfpu::unary_words<ttsim::fill::word>("fill_tile_int", "fill", ttsim::sfpu_cost::kSimple, idst, true, param0);
    }
}

}  // namespace ckernel
