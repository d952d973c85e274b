// SFPU arithmetic of a DST tile with column 0 or row 0 of another DST tile broadcast across it
// (api/compute/sfpu_binary_bcast.h), in fp32, result in place, and the layernorm normalisations
// (data - mean) * inv_std with the statistics' column 0 (or element 0) broadcast. tt-llk runs these on
// fp32 operands only: they need fp32_dest_acc_en. Cost: one simple pass per data tile, as the
// simulator has charged the broadcast forms (estimate, ttsim/sfpu_cost.h).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

namespace ttsim::bcast {
inline float add(float x, float v, const uint32_t*) { return x + v; }
inline float sub(float x, float v, const uint32_t*) { return x - v; }
inline float mul(float x, float v, const uint32_t*) { return x * v; }
inline float normalize(float x, float mean, float inv_std, const uint32_t*) { return (x - mean) * inv_std; }
inline float residual_normalize(float x, float r, float mean, float inv_std, const uint32_t*) {
    return (x + r - mean) * inv_std;
}
constexpr const char* kColInit = "sfpu_bcast_col_init";
constexpr const char* kRowInit = "sfpu_bcast_row_init";
constexpr const char* kScalarInit = "sfpu_normalize_bcast_scalar_init";
constexpr uint32_t kSecondCol = sfpu::broadcast(1, SfpuBroadcast::Col);
constexpr uint32_t kSecondRow = sfpu::broadcast(1, SfpuBroadcast::Row);

inline void require_fp32_dest(const char* call) {
    if (!DST_ACCUM_MODE) {
        TTSIM->fail(call, "sfpu_*_bcast_col/row and the normalisations need fp32 DST: set fp32_dest_acc_en in the "
                          "compute config");
    }
}
template <sfpu::FloatBinary F>
inline void col(const char* call, uint32_t data, uint32_t vec) {
    require_fp32_dest(call);
    sfpu::binary_broadcast<F>(call, kColInit, sfpu_cost::kSimple, data, vec, data, kSecondCol);
}
template <sfpu::FloatBinary F>
inline void row(const char* call, uint32_t data, uint32_t vec) {
    require_fp32_dest(call);
    sfpu::binary_broadcast<F>(call, kRowInit, sfpu_cost::kSimple, data, vec, data, kSecondRow);
}
}  // namespace ttsim::bcast

namespace ckernel {

ALWI void sfpu_bcast_col_init() { ttsim::sfpu::setup(ttsim::bcast::kColInit); }
ALWI void sfpu_sub_bcast_col_init() { sfpu_bcast_col_init(); }
ALWI void sfpu_add_bcast_col_init() { sfpu_bcast_col_init(); }
ALWI void sfpu_mul_bcast_col_init() { sfpu_bcast_col_init(); }
ALWI void sfpu_bcast_row_init() { ttsim::sfpu::setup(ttsim::bcast::kRowInit); }
ALWI void sfpu_sub_bcast_row_init() { sfpu_bcast_row_init(); }
ALWI void sfpu_add_bcast_row_init() { sfpu_bcast_row_init(); }
ALWI void sfpu_mul_bcast_row_init() { sfpu_bcast_row_init(); }
ALWI void sfpu_normalize_bcast_scalar_init() { ttsim::sfpu::setup(ttsim::bcast::kScalarInit); }

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_sub_bcast_col(uint32_t dst_data_idx, uint32_t dst_col_vec_idx) {
    ttsim::bcast::col<ttsim::bcast::sub>("sfpu_sub_bcast_col", dst_data_idx, dst_col_vec_idx);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_add_bcast_col(uint32_t dst_data_idx, uint32_t dst_col_vec_idx) {
    ttsim::bcast::col<ttsim::bcast::add>("sfpu_add_bcast_col", dst_data_idx, dst_col_vec_idx);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_mul_bcast_col(uint32_t dst_data_idx, uint32_t dst_col_vec_idx) {
    ttsim::bcast::col<ttsim::bcast::mul>("sfpu_mul_bcast_col", dst_data_idx, dst_col_vec_idx);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_sub_bcast_row(uint32_t dst_data_idx, uint32_t dst_row_vec_idx) {
    ttsim::bcast::row<ttsim::bcast::sub>("sfpu_sub_bcast_row", dst_data_idx, dst_row_vec_idx);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_add_bcast_row(uint32_t dst_data_idx, uint32_t dst_row_vec_idx) {
    ttsim::bcast::row<ttsim::bcast::add>("sfpu_add_bcast_row", dst_data_idx, dst_row_vec_idx);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_mul_bcast_row(uint32_t dst_data_idx, uint32_t dst_row_vec_idx) {
    ttsim::bcast::row<ttsim::bcast::mul>("sfpu_mul_bcast_row", dst_data_idx, dst_row_vec_idx);
}

// (data - mean) * inv_std with column 0 of the mean and inv_std tiles broadcast; in place.
ALWI void sfpu_normalize_bcast_col(uint32_t dst_data_idx, uint32_t dst_mean_col_idx, uint32_t dst_inv_std_col_idx) {
    ttsim::bcast::require_fp32_dest("sfpu_normalize_bcast_col");
    ttsim::sfpu::ternary_broadcast<ttsim::bcast::normalize>(
        "sfpu_normalize_bcast_col", ttsim::bcast::kColInit, ttsim::sfpu_cost::kSimple, dst_data_idx, dst_mean_col_idx,
        dst_inv_std_col_idx, dst_data_idx,
        ttsim::sfpu::broadcast(1, ttsim::SfpuBroadcast::Col) | ttsim::sfpu::broadcast(2, ttsim::SfpuBroadcast::Col));
}
ALWI void sfpu_normalize_bcast_col_two_tiles(uint32_t dst_data_idx, uint32_t dst_second_data_idx,
                                             uint32_t dst_mean_col_idx, uint32_t dst_inv_std_col_idx) {
    sfpu_normalize_bcast_col(dst_data_idx, dst_mean_col_idx, dst_inv_std_col_idx);
    sfpu_normalize_bcast_col(dst_second_data_idx, dst_mean_col_idx, dst_inv_std_col_idx);
}
// (data + residual - mean) * inv_std, statistics' column 0 broadcast; in place on the data tile.
ALWI void sfpu_residual_normalize_bcast_col(uint32_t dst_data_idx, uint32_t dst_residual_idx, uint32_t dst_mean_col_idx,
                                            uint32_t dst_inv_std_col_idx) {
    ttsim::bcast::require_fp32_dest("sfpu_residual_normalize_bcast_col");
    ttsim::sfpu::quaternary_broadcast<ttsim::bcast::residual_normalize>(
        "sfpu_residual_normalize_bcast_col", ttsim::bcast::kColInit, 2 * ttsim::sfpu_cost::kSimple, dst_data_idx,
        dst_residual_idx, dst_mean_col_idx, dst_inv_std_col_idx, dst_data_idx,
        ttsim::sfpu::broadcast(2, ttsim::SfpuBroadcast::Col) | ttsim::sfpu::broadcast(3, ttsim::SfpuBroadcast::Col));
}
// (data - mean) * inv_std with element 0 of the mean and inv_std tiles broadcast; in place.
ALWI void sfpu_normalize_bcast_scalar(uint32_t dst_data_idx, uint32_t dst_mean_scalar_idx,
                                      uint32_t dst_inv_std_scalar_idx) {
    ttsim::bcast::require_fp32_dest("sfpu_normalize_bcast_scalar");
    ttsim::sfpu::ternary_broadcast<ttsim::bcast::normalize>(
        "sfpu_normalize_bcast_scalar", ttsim::bcast::kScalarInit, ttsim::sfpu_cost::kSimple, dst_data_idx,
        dst_mean_scalar_idx, dst_inv_std_scalar_idx, dst_data_idx,
        ttsim::sfpu::broadcast(1, ttsim::SfpuBroadcast::Scalar) | ttsim::sfpu::broadcast(2, ttsim::SfpuBroadcast::Scalar));
}

template <BroadcastType Dim>
ALWI void sfpu_bcast_init() {
    static_assert(Dim == BroadcastType::COL || Dim == BroadcastType::ROW, "sfpu_bcast_init takes COL or ROW");
    if constexpr (Dim == BroadcastType::COL) {
        sfpu_bcast_col_init();
    } else {
        sfpu_bcast_row_init();
    }
}
template <BroadcastType Dim, EltwiseBinaryType Op, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_bcast(uint32_t dst_data_idx, uint32_t dst_bcast_idx) {
    static_assert(Dim == BroadcastType::COL || Dim == BroadcastType::ROW, "sfpu_bcast takes COL or ROW");
    static_assert(Op == EltwiseBinaryType::ELWADD || Op == EltwiseBinaryType::ELWSUB || Op == EltwiseBinaryType::ELWMUL,
                  "sfpu_bcast takes ELWADD, ELWSUB or ELWMUL");
    constexpr auto fn = Op == EltwiseBinaryType::ELWADD   ? ttsim::bcast::add
                        : Op == EltwiseBinaryType::ELWSUB ? ttsim::bcast::sub
                                                          : ttsim::bcast::mul;
    if constexpr (Dim == BroadcastType::COL) {
        ttsim::bcast::col<fn>("sfpu_bcast", dst_data_idx, dst_bcast_idx);
    } else {
        ttsim::bcast::row<fn>("sfpu_bcast", dst_data_idx, dst_bcast_idx);
    }
}

}  // namespace ckernel
