// Integer addition of two DST tiles on the SFPU (api/compute/add_int_sfpu.h): wrapping 32-bit add
// (UInt16: the low 16 bits). Exact.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::int_arith {
template <DataFormat f>
constexpr uint32_t mask() { return f == DataFormat::UInt16 ? 0xFFFFu : 0xFFFFFFFFu; }
template <DataFormat f>
inline uint32_t add(uint32_t a, uint32_t b, const uint32_t*) { return (a + b) & mask<f>(); }
template <DataFormat f>
inline uint32_t sub(uint32_t a, uint32_t b, const uint32_t*) { return (a - b) & mask<f>(); }
template <DataFormat f>
inline uint32_t rsub(uint32_t a, uint32_t b, const uint32_t*) { return (b - a) & mask<f>(); }
// A load of each operand, an integer add and a store per row.
constexpr uint64_t kCost = 4 * sfpu_cost::kPass;
}  // namespace ttsim::int_arith

namespace ckernel {

template <DataFormat data_format>
ALWI void add_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    static_assert(data_format == DataFormat::Int32 || is_uint32_format(data_format) || data_format == DataFormat::UInt16,
                  "add_int_tile takes Int32, UInt32 or UInt16");
    ttsim::sfpu::binary_words<ttsim::int_arith::add<data_format>>("add_int_tile", "add_int", ttsim::int_arith::kCost, idst0,
                                                                  idst1, odst);
}
ALWI void add_int_tile_init() { ttsim::sfpu::setup("add_int"); }

}  // namespace ckernel
