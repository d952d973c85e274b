// Broadcasting operations on the FPU (api/compute/bcast.h). B's column 0 (COL), row 0 (ROW) or
// element [0][0] (SCALAR) is broadcast over the tile before A op B; unary_bcast copies the broadcast
// tile itself into DST.
#pragma once

#include "api/compute/common.h"
#include "api/compute/eltwise_binary.h"

namespace ckernel {

template <BroadcastType bcast_type>
constexpr DataCopyType unary_bcast_data_copy_type =
    bcast_type == BroadcastType::NONE ? DataCopyType::A2D : DataCopyType::B2D;

template <BroadcastType bcast_type, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void unary_bcast_init(uint32_t icb) {
    TTSIM->fpu_init(ttsim::FpuOp::Copy, ttsim::detail::bcast_of(bcast_type), icb, icb, 0);
}
template <BroadcastType bcast_type, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void unary_bcast(uint32_t icb, uint32_t in_tile_index, uint32_t dst_tile_index) {
    TTSIM->copy_tile(icb, in_tile_index, dst_tile_index);
}
// Returns the unpacker and math to plain copies (copy_init's configuration).
template <BroadcastType bcast_type>
ALWI void unary_bcast_uninit(uint32_t icb) {
    TTSIM->fpu_init(ttsim::FpuOp::Copy, ttsim::Bcast::None, icb, icb, 0);
}

template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim>
ALWI void bcast_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    static_assert(ttsim::detail::fpu_op_of(tBcastOp) != ttsim::FpuOp::None,
                  "only ELWADD, ELWSUB and ELWMUL broadcast on the FPU");
    TTSIM->fpu_init(ttsim::detail::fpu_op_of(tBcastOp), ttsim::detail::bcast_of(tBcastDim), icb0, icb1, 0);
}

// bcast_row_idx picks which row of B a ROW broadcast repeats; the simulator models row 0 only.
template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void any_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    if (bcast_row_idx != 0) {
        TTSIM->fail("*_tiles_bcast", "not modeled by the simulator: a ROW broadcast of a row other than 0 (bcast_row_idx)");
    }
    TTSIM->binary_tiles(ttsim::detail::fpu_op_of(tBcastOp), ttsim::detail::bcast_of(tBcastDim), icb0, icb1, itile0,
                        itile1, idst);
}
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    any_tiles_bcast<EltwiseBinaryType::ELWADD, tBcastDim, is_fp32_dest_acc_en>(icb0, icb1, itile0, itile1, idst,
                                                                               bcast_row_idx);
}
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    any_tiles_bcast<EltwiseBinaryType::ELWSUB, tBcastDim, is_fp32_dest_acc_en>(icb0, icb1, itile0, itile1, idst,
                                                                               bcast_row_idx);
}
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    any_tiles_bcast<EltwiseBinaryType::ELWMUL, tBcastDim, is_fp32_dest_acc_en>(icb0, icb1, itile0, itile1, idst,
                                                                               bcast_row_idx);
}

// The named forms: {add,sub,mul}_bcast_{rows,cols,scalar}_init and {add,sub,mul}_tiles_bcast_{...}.
#define TTSIM_BCAST_INIT(OP, DIM, TYPE, BTYPE)                                                                  \
    ALWI void OP##_bcast_##DIM##_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {    \
        bcast_init<EltwiseBinaryType::TYPE, BroadcastType::BTYPE>(icb0, icb1, call_line);                       \
    }
TTSIM_BCAST_INIT(add, rows, ELWADD, ROW)
TTSIM_BCAST_INIT(sub, rows, ELWSUB, ROW)
TTSIM_BCAST_INIT(mul, rows, ELWMUL, ROW)
TTSIM_BCAST_INIT(add, cols, ELWADD, COL)
TTSIM_BCAST_INIT(sub, cols, ELWSUB, COL)
TTSIM_BCAST_INIT(mul, cols, ELWMUL, COL)
TTSIM_BCAST_INIT(add, scalar, ELWADD, SCALAR)
TTSIM_BCAST_INIT(sub, scalar, ELWSUB, SCALAR)
TTSIM_BCAST_INIT(mul, scalar, ELWMUL, SCALAR)
#undef TTSIM_BCAST_INIT

#define TTSIM_BCAST_TILES(OP, DIM, TYPE, BTYPE)                                                                 \
    template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>                                                        \
    ALWI void OP##_tiles_bcast_##DIM(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1,            \
                                     uint32_t idst) {                                                           \
        any_tiles_bcast<EltwiseBinaryType::TYPE, BroadcastType::BTYPE, is_fp32_dest_acc_en>(icb0, icb1, itile0, \
                                                                                            itile1, idst);      \
    }
#define TTSIM_BCAST_TILES_ROW(OP, TYPE)                                                                         \
    template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>                                                        \
    ALWI void OP##_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1,             \
                                    uint32_t idst, uint32_t bcast_row_idx = 0) {                                \
        any_tiles_bcast<EltwiseBinaryType::TYPE, BroadcastType::ROW, is_fp32_dest_acc_en>(icb0, icb1, itile0,   \
                                                                                          itile1, idst,         \
                                                                                          bcast_row_idx);       \
    }
TTSIM_BCAST_TILES_ROW(add, ELWADD)
TTSIM_BCAST_TILES_ROW(sub, ELWSUB)
TTSIM_BCAST_TILES_ROW(mul, ELWMUL)
TTSIM_BCAST_TILES(add, cols, ELWADD, COL)
TTSIM_BCAST_TILES(sub, cols, ELWSUB, COL)
TTSIM_BCAST_TILES(mul, cols, ELWMUL, COL)
TTSIM_BCAST_TILES(add, scalar, ELWADD, SCALAR)
TTSIM_BCAST_TILES(sub, scalar, ELWSUB, SCALAR)
TTSIM_BCAST_TILES(mul, scalar, ELWMUL, SCALAR)
#undef TTSIM_BCAST_TILES
#undef TTSIM_BCAST_TILES_ROW

}  // namespace ckernel
