// Integer row / column sums inside DST (api/compute/eltwise_unary/sfpu_int_sum.h): declared only.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ckernel {

ALWI void sfpu_sum_int_init() { TTSIM_NOT_MODELED("sfpu_sum_int_init", "SFPU reductions inside DST"); }
ALWI void sfpu_sum_int_col(uint32_t) { TTSIM_NOT_MODELED("sfpu_sum_int_col", "SFPU reductions inside DST"); }
ALWI void sfpu_sum_int_row(uint32_t) { TTSIM_NOT_MODELED("sfpu_sum_int_row", "SFPU reductions inside DST"); }
ALWI void sfpu_add_int(uint32_t, uint32_t dst_offset = 2, int32_t iterations = 8) {
    TTSIM_NOT_MODELED("sfpu_add_int", "SFPU reductions inside DST");
}

}  // namespace ckernel
