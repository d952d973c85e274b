// Bitwise and / or / xor of two DST tiles on the SFPU (api/compute/binary_bitwise_sfpu.h): exact;
// UInt16 keeps the low 16 bits.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::bitwise2 {
template <DataFormat f>
constexpr uint32_t mask() { return f == DataFormat::UInt16 ? 0xFFFFu : 0xFFFFFFFFu; }
template <DataFormat f>
inline uint32_t and_words(uint32_t a, uint32_t b, const uint32_t*) { return (a & b) & mask<f>(); }
template <DataFormat f>
inline uint32_t or_words(uint32_t a, uint32_t b, const uint32_t*) { return (a | b) & mask<f>(); }
template <DataFormat f>
inline uint32_t xor_words(uint32_t a, uint32_t b, const uint32_t*) { return (a ^ b) & mask<f>(); }
constexpr uint64_t kCost = 4 * sfpu_cost::kPass;
}  // namespace ttsim::bitwise2

namespace ckernel {

ALWI void binary_bitwise_tile_init() { ttsim::sfpu::setup("binary_bitwise"); }
template <DataFormat data_format>
ALWI void bitwise_and_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::bitwise2::and_words<data_format>>("bitwise_and_binary_tile", "binary_bitwise",
                                                                       ttsim::bitwise2::kCost, idst0, idst1, odst);
}
template <DataFormat data_format>
ALWI void bitwise_or_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::bitwise2::or_words<data_format>>("bitwise_or_binary_tile", "binary_bitwise",
                                                                      ttsim::bitwise2::kCost, idst0, idst1, odst);
}
template <DataFormat data_format>
ALWI void bitwise_xor_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::bitwise2::xor_words<data_format>>("bitwise_xor_binary_tile", "binary_bitwise",
                                                                       ttsim::bitwise2::kCost, idst0, idst1, odst);
}

}  // namespace ckernel
