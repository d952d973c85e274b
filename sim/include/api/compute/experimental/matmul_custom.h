// Matmul without the unpacker's replay program (api/compute/experimental/matmul_custom.h, used by sdpa):
// the same products as matmul_block, issued one by one on the device to save the MOP set-up. The
// simulator computes them as matmul_block does. The *_fidelity forms run at their own fidelity instead
// of the compute config's. matmul_set_in1_column_stride spaces the block's in1 columns stride_tiles
// apart in the CB; with a stride other than 1 each column is issued separately, so in0 is charged as
// unpacked once per column (the device reuses it; the difference is in the modeled unpack time only).
#pragma once

#include "api/compute/matmul.h"

namespace ttsim::detail {
inline uint32_t mm_in1_column_stride = 1;

// fpu_init flags of a matmul init: bit 0 transpose, bits 12-15 the fidelity plus one (0: the config's).
inline uint32_t matmul_flags(bool transpose, int fidelity_plus_one) {
    return (transpose ? 1u : 0u) | (uint32_t(fidelity_plus_one) << 12);
}
inline void mm_no_mop_init(uint32_t in0, uint32_t in1, bool transpose, int fidelity_plus_one) {
    mm_in1_column_stride = 1;
    TTSIM->fpu_init(ttsim::FpuOp::Matmul, ttsim::Bcast::None, in0, in1, matmul_flags(transpose, fidelity_plus_one));
}
inline void mm_no_mop_block(uint32_t in0, uint32_t in1, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                            bool transpose, uint32_t ct, uint32_t rt, uint32_t kt) {
    if (mm_in1_column_stride == 1) {
        TTSIM->matmul_block(in0, in1, in0_tile, in1_tile, idst, transpose ? 1 : 0, ct, rt, kt);
        return;
    }
    // Column c of the block reads in1 tile in1_tile + c * stride; DST keeps the row-major r * ct + c order.
    for (uint32_t c = 0; c < ct; ++c) {
        for (uint32_t r = 0; r < rt; ++r) {
            TTSIM->matmul_block(in0, in1, in0_tile + r * kt, in1_tile + c * mm_in1_column_stride, idst + r * ct + c,
                                transpose ? 1 : 0, 1, 1, kt);
        }
    }
}
}  // namespace ttsim::detail

namespace ckernel {

ALWI void matmul_set_in1_column_stride(uint32_t in1_cb_id, uint32_t stride_tiles) {
    (void)in1_cb_id;
    if (stride_tiles == 0) TTSIM->fail("matmul_set_in1_column_stride", "the stride must be at least one tile");
    ttsim::detail::mm_in1_column_stride = stride_tiles;
}
ALWI void mm_no_mop_init_short(uint32_t in0_cb_id, uint32_t in1_cb_id, const bool transpose = false, uint32_t ct_dim = 1,
                               uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
    ttsim::detail::mm_no_mop_init(in0_cb_id, in1_cb_id, transpose, 0);
}
ALWI void matmul_block_no_mop(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index, uint32_t in1_tile_index,
                              uint32_t idst, const bool transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim) {
    ttsim::detail::mm_no_mop_block(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose, ct_dim,
                                   rt_dim, kt_dim);
}
ALWI void mm_no_mop_reinit_short(uint32_t in0_cb_id, uint32_t in1_cb_id, const bool transpose = false,
                                 uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
    mm_no_mop_init_short(in0_cb_id, in1_cb_id, transpose, ct_dim, rt_dim, kt_dim);
}
template <MathFidelity math_fidelity>
ALWI void mm_no_mop_init_short_fidelity(uint32_t in0_cb_id, uint32_t in1_cb_id, const bool transpose = false,
                                        uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
    ttsim::detail::mm_no_mop_init(in0_cb_id, in1_cb_id, transpose, int(math_fidelity) + 1);
}
template <MathFidelity math_fidelity>
ALWI void matmul_block_no_mop_fidelity(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index,
                                       uint32_t in1_tile_index, uint32_t idst, const bool transpose, uint32_t ct_dim,
                                       uint32_t rt_dim, uint32_t kt_dim) {
    ttsim::detail::mm_no_mop_block(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose, ct_dim,
                                   rt_dim, kt_dim);
}
template <MathFidelity math_fidelity>
ALWI void mm_no_mop_reinit_short_fidelity(uint32_t in0_cb_id, uint32_t in1_cb_id, const bool transpose = false,
                                          uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
    mm_no_mop_init_short_fidelity<math_fidelity>(in0_cb_id, in1_cb_id, transpose, ct_dim, rt_dim, kt_dim);
}

}  // namespace ckernel
