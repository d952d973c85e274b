// Unpack a tile from a circular buffer into DST (api/compute/tile_move_copy.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_init(
    std::uint32_t cbid, std::uint32_t transpose = 0, std::uint32_t transpose_within_16x16_face = false,
    std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    if (transpose || transpose_within_16x16_face) {
        TTSIM->fail("copy_init", "transposing copies are not supported by the simulator; use transpose_init/transpose_tile");
    }
    TTSIM->fpu_init(ttsim::FpuOp::Copy, ttsim::Bcast::None, cbid, cbid, 0);
}
ALWI void copy_tile(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index) {
    TTSIM->copy_tile(in_cb_id, in_tile_index, dst_tile_index);
}
ALWI void copy_block(std::uint32_t in_cb_id, std::uint32_t start_in_tile_index, std::uint32_t start_dst_tile_index,
                     std::uint32_t ntiles) {
    for (std::uint32_t i = 0; i < ntiles; ++i) {
        TTSIM->copy_tile(in_cb_id, start_in_tile_index + i, start_dst_tile_index + i);
    }
}
