// Integer multiply of two DST tiles on the SFPU (api/compute/mul_int_sfpu.h): the low 32 bits of the
// product (UInt16: the low 16), exact as on the device.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::mul_int {
inline uint32_t word(uint32_t a, uint32_t b, const uint32_t*) { return a * b; }
inline uint32_t low16(uint32_t a, uint32_t b, const uint32_t*) { return (a * b) & 0xFFFFu; }
}  // namespace ttsim::mul_int

namespace ckernel {

template <DataFormat data_format>
ALWI void mul_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    static_assert(data_format == DataFormat::Int32 || data_format == DataFormat::UInt32 || data_format == DataFormat::UInt16,
                  "mul_int_tile takes Int32, UInt32 or UInt16");
    if constexpr (data_format == DataFormat::UInt16) {
        ttsim::sfpu::binary_words<ttsim::mul_int::low16>("mul_int_tile", "mul_uint16", ttsim::sfpu_cost::kIntMul, idst0,
                                                         idst1, odst);
    } else {
        ttsim::sfpu::binary_words<ttsim::mul_int::word>("mul_int_tile", "mul_int32", ttsim::sfpu_cost::kIntMul, idst0,
                                                        idst1, odst);
    }
}
template <DataFormat data_format>
ALWI void mul_int_tile_init() {
    static_assert(data_format == DataFormat::Int32 || data_format == DataFormat::UInt32 || data_format == DataFormat::UInt16,
                  "mul_int_tile_init takes Int32, UInt32 or UInt16");
    ttsim::sfpu::setup(data_format == DataFormat::UInt16 ? "mul_uint16" : "mul_int32");
}

}  // namespace ckernel
