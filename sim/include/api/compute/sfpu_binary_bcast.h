// SFPU add / sub / mul of a DST tile with column 0 or row 0 of another DST tile broadcast across it
// (api/compute/sfpu_binary_bcast.h), in fp32, result in place. Needs fp32_dest_acc_en.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

ALWI void sfpu_bcast_col_init() { TTSIM->sfpu_init(ttsim::SfpuOp::BcastColMul); }
ALWI void sfpu_sub_bcast_col_init() { sfpu_bcast_col_init(); }
ALWI void sfpu_add_bcast_col_init() { sfpu_bcast_col_init(); }
ALWI void sfpu_mul_bcast_col_init() { sfpu_bcast_col_init(); }
ALWI void sfpu_bcast_row_init() { TTSIM->sfpu_init(ttsim::SfpuOp::BcastRowMul); }
ALWI void sfpu_sub_bcast_row_init() { sfpu_bcast_row_init(); }
ALWI void sfpu_add_bcast_row_init() { sfpu_bcast_row_init(); }
ALWI void sfpu_mul_bcast_row_init() { sfpu_bcast_row_init(); }

template <bool is_fp32_dest_acc_en = true>
ALWI void sfpu_sub_bcast_col(uint32_t dst_data_idx, uint32_t dst_col_vec_idx) {
    TTSIM->sfpu_binary(ttsim::SfpuOp::BcastColSub, dst_data_idx, dst_col_vec_idx, dst_data_idx);
}
template <bool is_fp32_dest_acc_en = true>
ALWI void sfpu_add_bcast_col(uint32_t dst_data_idx, uint32_t dst_col_vec_idx) {
    TTSIM->sfpu_binary(ttsim::SfpuOp::BcastColAdd, dst_data_idx, dst_col_vec_idx, dst_data_idx);
}
template <bool is_fp32_dest_acc_en = true>
ALWI void sfpu_mul_bcast_col(uint32_t dst_data_idx, uint32_t dst_col_vec_idx) {
    TTSIM->sfpu_binary(ttsim::SfpuOp::BcastColMul, dst_data_idx, dst_col_vec_idx, dst_data_idx);
}
template <bool is_fp32_dest_acc_en = true>
ALWI void sfpu_sub_bcast_row(uint32_t dst_data_idx, uint32_t dst_row_vec_idx) {
    TTSIM->sfpu_binary(ttsim::SfpuOp::BcastRowSub, dst_data_idx, dst_row_vec_idx, dst_data_idx);
}
template <bool is_fp32_dest_acc_en = true>
ALWI void sfpu_add_bcast_row(uint32_t dst_data_idx, uint32_t dst_row_vec_idx) {
    TTSIM->sfpu_binary(ttsim::SfpuOp::BcastRowAdd, dst_data_idx, dst_row_vec_idx, dst_data_idx);
}
template <bool is_fp32_dest_acc_en = true>
ALWI void sfpu_mul_bcast_row(uint32_t dst_data_idx, uint32_t dst_row_vec_idx) {
    TTSIM->sfpu_binary(ttsim::SfpuOp::BcastRowMul, dst_data_idx, dst_row_vec_idx, dst_data_idx);
}
