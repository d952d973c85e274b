// Broadcasting binary operations (api/compute/bcast.h). B's column 0 (COL), row 0 (ROW) or element
// [0][0] (SCALAR) is broadcast over the tile before A op B.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

namespace ttsim::detail {
ALWI void bcast_init(ttsim::FpuOp op, ttsim::Bcast b, uint32_t icb0, uint32_t icb1) { TTSIM->fpu_init(op, b, icb0, icb1, 0); }
ALWI void bcast_op(ttsim::FpuOp op, ttsim::Bcast b, uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1,
                   uint32_t idst) {
    TTSIM->binary_tiles(op, b, icb0, icb1, itile0, itile1, idst);
}
}  // namespace ttsim::detail

#define TTSIM_BCAST_PAIR(NAME, OP, BC)                                                                        \
    ALWI void NAME##_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {             \
        (void)call_line;                                                                                      \
        ttsim::detail::bcast_init(ttsim::FpuOp::OP, ttsim::Bcast::BC, icb0, icb1);                           \
    }
TTSIM_BCAST_PAIR(add_bcast_rows, Add, Row)
TTSIM_BCAST_PAIR(sub_bcast_rows, Sub, Row)
TTSIM_BCAST_PAIR(mul_bcast_rows, Mul, Row)
TTSIM_BCAST_PAIR(add_bcast_cols, Add, Col)
TTSIM_BCAST_PAIR(sub_bcast_cols, Sub, Col)
TTSIM_BCAST_PAIR(mul_bcast_cols, Mul, Col)
TTSIM_BCAST_PAIR(add_bcast_scalar, Add, Scalar)
TTSIM_BCAST_PAIR(sub_bcast_scalar, Sub, Scalar)
TTSIM_BCAST_PAIR(mul_bcast_scalar, Mul, Scalar)
#undef TTSIM_BCAST_PAIR

ALWI void sub_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttsim::detail::bcast_op(ttsim::FpuOp::Sub, ttsim::Bcast::Col, icb0, icb1, itile0, itile1, idst);
}
ALWI void sub_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttsim::detail::bcast_op(ttsim::FpuOp::Sub, ttsim::Bcast::Scalar, icb0, icb1, itile0, itile1, idst);
}
ALWI void mul_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttsim::detail::bcast_op(ttsim::FpuOp::Mul, ttsim::Bcast::Col, icb0, icb1, itile0, itile1, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                               uint32_t bcast_row_idx = 0) {
    if (bcast_row_idx != 0) TTSIM->fail("mul_tiles_bcast_rows", "bcast_row_idx other than 0 is not supported");
    ttsim::detail::bcast_op(ttsim::FpuOp::Mul, ttsim::Bcast::Row, icb0, icb1, itile0, itile1, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                               uint32_t bcast_row_idx = 0) {
    if (bcast_row_idx != 0) TTSIM->fail("add_tiles_bcast_rows", "bcast_row_idx other than 0 is not supported");
    ttsim::detail::bcast_op(ttsim::FpuOp::Add, ttsim::Bcast::Row, icb0, icb1, itile0, itile1, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                               uint32_t bcast_row_idx = 0) {
    if (bcast_row_idx != 0) TTSIM->fail("sub_tiles_bcast_rows", "bcast_row_idx other than 0 is not supported");
    ttsim::detail::bcast_op(ttsim::FpuOp::Sub, ttsim::Bcast::Row, icb0, icb1, itile0, itile1, idst);
}
ALWI void add_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttsim::detail::bcast_op(ttsim::FpuOp::Add, ttsim::Bcast::Col, icb0, icb1, itile0, itile1, idst);
}
ALWI void add_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttsim::detail::bcast_op(ttsim::FpuOp::Add, ttsim::Bcast::Scalar, icb0, icb1, itile0, itile1, idst);
}
ALWI void mul_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttsim::detail::bcast_op(ttsim::FpuOp::Mul, ttsim::Bcast::Scalar, icb0, icb1, itile0, itile1, idst);
}
