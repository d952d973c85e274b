// Layernorm's compensated mean subtraction (api/compute/experimental/layernorm.h): x minus a mean held
// as a split (high + low part) column in split_mean_cb, subtracted in two steps for accuracy. The
// split-mean tile layout and the two-step arithmetic are not modeled by the simulator, so both calls
// stop the run (the declarations match the pinned header so kernels compile).
#pragma once

#include "api/compute/common.h"

namespace ckernel {

ALWI void sub_bcast_cols_compensated_init(std::uint32_t input_cb, std::uint32_t split_mean_cb,
                                          std::uint32_t call_line = __builtin_LINE()) {
    TTSIM->fail("sub_bcast_cols_compensated_init", "not modeled by the simulator: the split-mean compensated subtraction");
}
ALWI void sub_bcast_cols_compensated(std::uint32_t input_cb, std::uint32_t split_mean_cb, std::uint32_t input_tile,
                                     std::uint32_t dst_tile, std::uint32_t tile_count) {
    TTSIM->fail("sub_bcast_cols_compensated", "not modeled by the simulator: the split-mean compensated subtraction");
}

}  // namespace ckernel
