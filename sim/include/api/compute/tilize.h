// Row-major pages -> tiles (api/compute/tilize.h). The input CB's front pages hold row-major rows
// `block` tiles wide (32 rows make one band of `block` tiles); tilize_block cuts them into 32x32
// tiles (the unpacker's tilize mode), copies each through DST and packs it to the output CB. Each tile
// takes its own DST acquire/commit/wait/release, as on the device, so the kernel must not hold DST.
// The fast_tilize forms produce the same tiles through a faster unpacker sequence on the device; the
// simulator gives them the same values and the same modeled cost (their speed-up is not modeled).
#pragma once

#include "api/compute/common.h"
#include "api/compute/reconfig_data_format.h"

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    (void)block;
    TTSIM->fpu_init(ttsim::FpuOp::Tilize, ttsim::Bcast::None, icb, icb, 0);
    TTSIM->pack_reconfig(ocb);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_init_short_with_dt(uint32_t old_icb, uint32_t new_icb, uint32_t block, uint32_t ocb) {
    reconfig_data_format_srca(old_icb, new_icb);
    tilize_init<is_fp32_dest_acc_en>(new_icb, block, ocb);
}
// input_tile_index counts tiles of the row-major image at the front of icb (band by band);
// output_tile_index is the first of the reserved output pages written.
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                       uint32_t output_tile_index = 0) {
    for (uint32_t t = 0; t < block; ++t) {
        TTSIM->regs_acquire();
        TTSIM->tilize_tile(icb, input_tile_index + t, block, 0);
        TTSIM->regs_commit();
        TTSIM->regs_wait();
        TTSIM->pack_tile(0, ocb, output_tile_index + t, true);
        TTSIM->regs_release();
    }
}
// Returns the unpacker from tilize mode to plain tile unpacking; the next *_init configures the FPU.
ALWI void tilize_uninit(uint32_t icb, uint32_t ocb) {
    (void)icb;
    (void)ocb;
    TTSIM->fpu_init(ttsim::FpuOp::None, ttsim::Bcast::None, -1, -1, 0);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_init(uint32_t icb, uint32_t full_dim, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    tilize_init<is_fp32_dest_acc_en>(icb, full_dim, ocb, call_line);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_init_skip_remap(uint32_t icb, uint32_t full_dim, uint32_t ocb,
                                      uint32_t call_line = __builtin_LINE()) {
    tilize_init<is_fp32_dest_acc_en>(icb, full_dim, ocb, call_line);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_init_with_dt(uint32_t icb, uint32_t full_dim, uint32_t ocb) {
    reconfig_data_format(icb, icb);
    tilize_init<is_fp32_dest_acc_en>(icb, full_dim, ocb);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_init_with_dt_skip_remap(uint32_t icb, uint32_t full_dim, uint32_t ocb) {
    reconfig_data_format(icb, icb);
    tilize_init<is_fp32_dest_acc_en>(icb, full_dim, ocb);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_uninit(uint32_t icb, uint32_t ocb, uint32_t full_dim) {
    (void)full_dim;
    tilize_uninit(icb, ocb);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                            uint32_t output_tile_index = 0) {
    tilize_block<is_fp32_dest_acc_en>(icb, block, ocb, input_tile_index, output_tile_index);
}

// Tilize srcA while srcB holds a second operand (the reduce-on-tilize path): not modeled.
#if defined(REDUCE_OP) && defined(REDUCE_DIM)
template <bool neginf_srcA = true, bool zero_srcA_reduce = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilizeA_B_reduce_init(uint32_t icb0, uint32_t icb1_scaler, uint32_t block,
                                uint32_t call_line = __builtin_LINE()) {
    TTSIM->fail("tilizeA_B_reduce_init", "not modeled by the simulator: tilizing srcA for a reduction");
}
#endif
template <bool neginf_srcA = true, std::uint32_t reload_srcB = true, bool zero_srcA = false,
          bool zero_srcA_reduce = false>
ALWI void unpack_tilizeA_B_block(uint32_t icb0, uint32_t icb1, uint32_t block, uint32_t tile_idx_b) {
    TTSIM->fail("unpack_tilizeA_B_block", "not modeled by the simulator: tilizing srcA while unpacking srcB");
}
ALWI void unpack_tilizeA_B_uninit(uint32_t icb) {
    TTSIM->fail("unpack_tilizeA_B_uninit", "not modeled by the simulator: tilizing srcA while unpacking srcB");
}

}  // namespace ckernel
