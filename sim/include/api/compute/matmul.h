// Tile matrix multiply on the FPU (api/compute/matmul.h): DST[idst] += in0 @ in1 (or in0 @ in1^T).
#pragma once

#include "api/compute/common.h"

namespace ckernel {

ALWI void matmul_init(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, const std::uint32_t transpose = 0,
                      std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    TTSIM->fpu_init(ttsim::FpuOp::Matmul, ttsim::Bcast::None, in0_cb_id, in1_cb_id, transpose ? 1u : 0u);
}
// Undoes matmul-specific unpacker state on Quasar only; on Wormhole the call does nothing, and the next
// *_init reconfigures the FPU either way.
ALWI void mm_uninit(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id) {
    (void)in0_cb_id;
    (void)in1_cb_id;
}
ALWI void matmul_tiles(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, std::uint32_t in0_tile_index,
                       std::uint32_t in1_tile_index, std::uint32_t idst) {
    TTSIM->matmul_block(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, -1, 1, 1, 1);
}
ALWI void matmul_block_init(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, const std::uint32_t transpose = 0,
                            std::uint32_t ct_dim = 1, std::uint32_t rt_dim = 1, std::uint32_t kt_dim = 1,
                            std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    (void)ct_dim;
    (void)rt_dim;
    (void)kt_dim;
    TTSIM->fpu_init(ttsim::FpuOp::Matmul, ttsim::Bcast::None, in0_cb_id, in1_cb_id, transpose ? 1u : 0u);
}
// One k-step of an rt_dim x ct_dim block: in0 tiles are row-major rt_dim x kt_dim starting at
// in0_tile_index, in1 tiles are row-major kt_dim x ct_dim starting at in1_tile_index, and
// DST[idst + r * ct_dim + c] += in0[r][0] @ in1[0][c].
ALWI void matmul_block(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, std::uint32_t in0_tile_index,
                       std::uint32_t in1_tile_index, std::uint32_t idst, const std::uint32_t transpose,
                       std::uint32_t ct_dim, std::uint32_t rt_dim, std::uint32_t kt_dim,
                       std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    TTSIM->matmul_block(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose != 0 ? 1 : 0, ct_dim,
                        rt_dim, kt_dim);
}

}  // namespace ckernel
