// log2(2^a + 2^b) of two DST tiles on the SFPU (api/compute/logaddexp2.h): as logaddexp.h, base 2.
#pragma once

#include "api/compute/logaddexp.h"

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void logaddexp2_binary_tile_init() { ttsim::sfpu::setup("logaddexp2"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void logaddexp2_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary<ttsim::logaddexp::base2>("logaddexp2_binary_tile", "logaddexp2", ttsim::logaddexp::kCost, idst0, idst1,
                                                 odst);
}

}  // namespace ckernel
