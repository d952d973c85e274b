// Tile transpose through the unpacker (api/compute/transpose.h): DST[idst] = tile^T.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_init(uint32_t icb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    TTSIM->fpu_init(ttsim::FpuOp::Transpose, ttsim::Bcast::None, icb, icb, 0);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_tile(uint32_t icb, uint32_t itile, uint32_t idst) {
    TTSIM->transpose_tile(icb, itile, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_block(uint32_t icb, uint32_t start_itile, uint32_t start_idst, uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i) TTSIM->transpose_tile(icb, start_itile + i, start_idst + i);
}

}  // namespace ckernel
