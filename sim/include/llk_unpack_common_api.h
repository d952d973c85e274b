// The unpacker's LLK calls kernels issue directly (UNPACK((llk_unpack_...))), Wormhole's
// llk_unpack_common_api.h: format reconfiguration of srcA / srcB, as reconfig_data_format_* does.
#pragma once

#include <cstdint>

#include "ttsim/common.h"

enum class p_dim_stride_target { IGNORE, FACE_ROW_MAJOR };

template <bool is_fp32_dest_acc_en, p_dim_stride_target dim_stride_target, bool skip_int8 = false>
inline void llk_unpack_reconfig_data_format_srca(const std::uint32_t srca_new_operand) {
    TTSIM->unpack_reconfig(int(srca_new_operand), -1);
}
template <bool is_fp32_dest_acc_en, p_dim_stride_target dim_stride_target, bool skip_int8 = false>
inline void llk_unpack_reconfig_data_format_srca(const std::uint32_t srca_old_operand,
                                                 const std::uint32_t srca_new_operand) {
    (void)srca_old_operand;
    TTSIM->unpack_reconfig(int(srca_new_operand), -1);
}
template <bool is_fp32_dest_acc_en, p_dim_stride_target dim_stride_target, bool skip_int8 = false>
inline void llk_unpack_reconfig_data_format_srcb(const std::uint32_t srcb_new_operand) {
    TTSIM->unpack_reconfig(-1, int(srcb_new_operand));
}
template <bool is_fp32_dest_acc_en, p_dim_stride_target dim_stride_target, bool skip_int8 = false>
inline void llk_unpack_reconfig_data_format_srcb(const std::uint32_t srcb_old_operand,
                                                 const std::uint32_t srcb_new_operand) {
    (void)srcb_old_operand;
    TTSIM->unpack_reconfig(-1, int(srcb_new_operand));
}
template <bool is_fp32_dest_acc_en, p_dim_stride_target dim_stride_target, bool skip_int8 = false>
inline void llk_unpack_reconfig_data_format(const std::uint32_t srca_new_operand, const std::uint32_t srcb_new_operand) {
    TTSIM->unpack_reconfig(int(srca_new_operand), int(srcb_new_operand));
}
template <bool is_fp32_dest_acc_en, p_dim_stride_target dim_stride_target, bool skip_int8 = false>
inline void llk_unpack_reconfig_data_format(const std::uint32_t srca_old_operand, const std::uint32_t srca_new_operand,
                                            const std::uint32_t srcb_old_operand, const std::uint32_t srcb_new_operand) {
    (void)srca_old_operand;
    (void)srcb_old_operand;
    TTSIM->unpack_reconfig(int(srca_new_operand), int(srcb_new_operand));
}
