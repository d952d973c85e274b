// Tiles -> row-major pages through the unpacker (api/compute/untilize.h, deprecated upstream in favour
// of pack_untilize). untilize_block turns full_ct_dim tiles at the front of the input CB into 32
// row-major rows, full_ct_dim tiles wide, in the pages reserved on the output CB. The device unpacks the
// rows and packs them as ordinary pages; the simulator copies the tiles and packs them row-major,
// which gives the same bytes, at the cost of a tile copy and pack per tile.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("use pack_untilize_init")]] ALWI void untilize_init(uint32_t icb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    TTSIM->fpu_init(ttsim::FpuOp::Copy, ttsim::Bcast::None, icb, icb, 0);
}
template <uint32_t block_ct_dim = 1, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("use pack_untilize_block")]] ALWI void untilize_block(uint32_t icb, uint32_t full_ct_dim, uint32_t ocb) {
    for (uint32_t t = 0; t < full_ct_dim / block_ct_dim; ++t) {
        TTSIM->regs_acquire();
        for (uint32_t c = 0; c < block_ct_dim; ++c) TTSIM->copy_tile(icb, t * block_ct_dim + c, c);
        TTSIM->regs_commit();
        TTSIM->regs_wait();
        TTSIM->pack_untilize(ocb, 0, block_ct_dim, full_ct_dim, t * block_ct_dim);
        TTSIM->regs_release();
    }
}
[[deprecated("use pack_untilize_uninit")]] ALWI void untilize_uninit(uint32_t icb) { (void)icb; }

}  // namespace ckernel
