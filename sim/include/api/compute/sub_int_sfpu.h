// Integer subtraction of two DST tiles on the SFPU (api/compute/sub_int_sfpu.h): a - b, or b - a for
// rsub; wrapping (UInt16: the low 16 bits). Exact.
#pragma once

#include "api/compute/add_int_sfpu.h"

namespace ckernel {

template <DataFormat data_format>
ALWI void sub_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    static_assert(data_format == DataFormat::Int32 || is_uint32_format(data_format) || data_format == DataFormat::UInt16,
                  "sub_int_tile takes Int32, UInt32 or UInt16");
    ttsim::sfpu::binary_words<ttsim::int_arith::sub<data_format>>("sub_int_tile", "sub_int", ttsim::int_arith::kCost, idst0,
                                                                  idst1, odst);
}
template <DataFormat data_format>
ALWI void rsub_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    static_assert(data_format == DataFormat::Int32 || is_uint32_format(data_format) || data_format == DataFormat::UInt16,
                  "rsub_int_tile takes Int32, UInt32 or UInt16");
    ttsim::sfpu::binary_words<ttsim::int_arith::rsub<data_format>>("rsub_int_tile", "rsub_int", ttsim::int_arith::kCost,
                                                                   idst0, idst1, odst);
}
ALWI void sub_int_tile_init() { ttsim::sfpu::setup("sub_int"); }
ALWI void rsub_int_tile_init() { ttsim::sfpu::setup("rsub_int"); }

}  // namespace ckernel
