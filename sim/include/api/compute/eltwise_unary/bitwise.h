// Bitwise and / or / xor of DST words with a scalar on the SFPU (api/compute/eltwise_unary/bitwise.h):
// exact; UInt16 data keeps its low 16 bits.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::bitwise {
template <DataFormat f>
constexpr uint32_t mask() { return f == DataFormat::UInt16 ? 0xFFFFu : 0xFFFFFFFFu; }
template <DataFormat f>
inline uint32_t and_word(uint32_t x, const uint32_t* p) { return (x & p[0]) & mask<f>(); }
template <DataFormat f>
inline uint32_t or_word(uint32_t x, const uint32_t* p) { return (x | p[0]) & mask<f>(); }
template <DataFormat f>
inline uint32_t xor_word(uint32_t x, const uint32_t* p) { return (x ^ p[0]) & mask<f>(); }
}  // namespace ttsim::bitwise

namespace ckernel {

ALWI void bitwise_and_tile_init() { ttsim::sfpu::setup("bitwise_and"); }
ALWI void bitwise_or_tile_init() { ttsim::sfpu::setup("bitwise_or"); }
ALWI void bitwise_xor_tile_init() { ttsim::sfpu::setup("bitwise_xor"); }
template <DataFormat data_format>
ALWI void bitwise_and_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::bitwise::and_word<data_format>>("bitwise_and_tile", "bitwise_and",
                                                                    ttsim::sfpu_cost::kSimple, idst, true, param0);
}
template <DataFormat data_format>
ALWI void bitwise_or_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::bitwise::or_word<data_format>>("bitwise_or_tile", "bitwise_or",
                                                                   ttsim::sfpu_cost::kSimple, idst, true, param0);
}
template <DataFormat data_format>
ALWI void bitwise_xor_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::bitwise::xor_word<data_format>>("bitwise_xor_tile", "bitwise_xor",
                                                                    ttsim::sfpu_cost::kSimple, idst, true, param0);
}

}  // namespace ckernel
