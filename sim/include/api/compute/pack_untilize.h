// Tiles -> row-major pages through the packer (api/compute/pack_untilize.h). pack_untilize_block
// copies block_ct_dim tiles from the front of the input CB into DST and the packer writes them as 32
// row-major rows, full_ct_dim tiles wide, into the pages reserved on the output CB, starting at tile
// column block_c_index * block_ct_dim. pack_untilize_dest packs tiles the kernel already has in DST.
// Each pack_untilize_block row of tiles takes its own DST acquire/commit/wait/release, as on the device.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

namespace pack_untilize_detail {
// The packer's untilize mode is set by the init; only whole 32-element rows of 32x32 tiles are modeled.
template <bool narrow_row, std::uint32_t row_num_datums, bool dense>
ALWI void check_untilize_shape() {
    static_assert(!narrow_row && row_num_datums == TILE_C_DIM && !dense,
                  "the simulator models pack_untilize of whole 32-element rows only");
}
}  // namespace pack_untilize_detail

template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool narrow_row = false,
          std::uint32_t row_num_datums = TILE_C_DIM, bool dense = false, bool configure_remap = true,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_dest_init(uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    pack_untilize_detail::check_untilize_shape<narrow_row, row_num_datums, dense>();
    TTSIM->pack_reconfig(ocb);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_init(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    TTSIM->fpu_init(ttsim::FpuOp::Copy, ttsim::Bcast::None, icb, icb, 0);
    TTSIM->pack_reconfig(ocb);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_init_skip_remap(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    pack_untilize_init<block_ct_dim, full_ct_dim, is_fp32_dest_acc_en>(icb, ocb, call_line);
}
// Each of the block_rt_dim passes copies the same block_ct_dim tiles at the front of icb (tile indices
// 0 .. block_ct_dim - 1) and packs them to the same place, as the device's sequence does; callers pass 1
// and move the CBs between calls.
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_block(uint32_t icb, uint32_t block_rt_dim, uint32_t ocb, uint32_t block_c_index = 0) {
    for (uint32_t r = 0; r < block_rt_dim; ++r) {
        TTSIM->regs_acquire();
        for (uint32_t c = 0; c < block_ct_dim; ++c) TTSIM->copy_tile(icb, c, c);
        TTSIM->regs_commit();
        TTSIM->regs_wait();
        TTSIM->pack_untilize(ocb, 0, block_ct_dim, full_ct_dim, block_c_index * block_ct_dim);
        TTSIM->regs_release();
    }
}
// The packer alone, on tiles in DST: row band r of block_rt_dim takes DST tiles
// tile_dst_rt_offset + r * block_ct_dim + tile_dst_ct_offset + c, and goes full_ct_dim pages further
// into the output than band r - 1.
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool diagonal = false, bool narrow_row = false,
          std::uint32_t row_num_datums = TILE_C_DIM, uint32_t tile_dst_ct_offset = 0, bool dense = false>
ALWI void pack_untilize_dest(uint32_t ocb, uint32_t block_rt_dim = 1, uint32_t block_c_index = 0,
                             uint32_t tile_dst_rt_offset = 0) {
    pack_untilize_detail::check_untilize_shape<narrow_row, row_num_datums, dense>();
    static_assert(!diagonal, "the simulator does not model the packer's diagonal untilize");
    if (block_rt_dim != 1) {
        TTSIM->fail("pack_untilize_dest", "not modeled by the simulator: more than one row band of tiles per call");
    }
    TTSIM->pack_untilize(ocb, tile_dst_rt_offset + tile_dst_ct_offset, block_ct_dim, full_ct_dim,
                         block_c_index * block_ct_dim);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_uninit(uint32_t ocb) {
    TTSIM->pack_reconfig(ocb);
}

}  // namespace ckernel
