// Unpack a tile from a circular buffer into DST (api/compute/tile_move_copy.h).
#pragma once

#include "api/compute/common.h"
#include "api/compute/reconfig_data_format.h"

namespace ckernel {

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
// Unpacking a tile nobody reads (the device uses it to keep the unpacker's counters in step): the
// simulator has no such counters, so it is refused rather than silently ignored.
ALWI void dummy_unpack(std::uint32_t cb_id) {
    (void)cb_id;
    TTSIM->fail("dummy_unpack", "not modeled by the simulator: the unpacker's tile counters");
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_tile(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index) {
    TTSIM->copy_tile(in_cb_id, in_tile_index, dst_tile_index);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_block(std::uint32_t in_cb_id, std::uint32_t start_in_tile_index, std::uint32_t start_dst_tile_index,
                     std::uint32_t ntiles) {
    for (std::uint32_t i = 0; i < ntiles; ++i) {
        TTSIM->copy_tile(in_cb_id, start_in_tile_index + i, start_dst_tile_index + i);
    }
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Renamed to copy_init().")]] ALWI void copy_tile_init(std::uint32_t cbid,
                                                                   std::uint32_t call_line = __builtin_LINE()) {
    copy_init<is_fp32_dest_acc_en>(cbid, 0, false, call_line);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Renamed to copy_init().")]] ALWI void copy_tile_to_dst_init_short(
    std::uint32_t cbid, std::uint32_t transpose = 0, std::uint32_t transpose_within_16x16_face = false,
    std::uint32_t call_line = __builtin_LINE()) {
    copy_init<is_fp32_dest_acc_en>(cbid, transpose, transpose_within_16x16_face, call_line);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Call reconfig_data_format_srca(old, new) then copy_init(new, transpose).")]] ALWI void
copy_tile_to_dst_init_short_with_dt(std::uint32_t old_cbid, std::uint32_t new_cbid, std::uint32_t transpose = 0) {
    reconfig_data_format_srca(old_cbid, new_cbid);
    copy_init<is_fp32_dest_acc_en>(new_cbid, transpose);
}

}  // namespace ckernel

// The LLK halves, which kernels may call directly.
#include "llk_math_unary_datacopy_api.h"
#include "llk_unpack_A_api.h"
