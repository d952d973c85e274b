// The math thread's LLK calls kernels issue directly (MATH((llk_math_...))), Wormhole's
// llk_math_common_api.h. Math follows the unpacker's srcA/srcB formats; the simulator keeps one record
// of them, so these set the same configuration as the unpacker's reconfiguration.
#pragma once

#include <cstdint>

#include "ttsim/common.h"

template <bool is_fp32_dest_acc_en, bool skip_int8 = false>
inline void llk_math_reconfig_data_format_srca(const std::uint32_t srca_new_operand) {
    TTSIM->unpack_reconfig(int(srca_new_operand), -1);
}
template <bool is_fp32_dest_acc_en, bool skip_int8 = false>
inline void llk_math_reconfig_data_format_srca(const std::uint32_t srca_old_operand, const std::uint32_t srca_new_operand) {
    (void)srca_old_operand;
    TTSIM->unpack_reconfig(int(srca_new_operand), -1);
}
template <bool is_fp32_dest_acc_en, bool skip_int8 = false>
inline void llk_math_reconfig_data_format_srcb(const std::uint32_t srcb_new_operand) {
    TTSIM->unpack_reconfig(-1, int(srcb_new_operand));
}
template <bool is_fp32_dest_acc_en, bool skip_int8 = false>
inline void llk_math_reconfig_data_format_srcb(const std::uint32_t srcb_old_operand, const std::uint32_t srcb_new_operand) {
    (void)srcb_old_operand;
    TTSIM->unpack_reconfig(-1, int(srcb_new_operand));
}
template <bool is_fp32_dest_acc_en, bool skip_int8 = false>
inline void llk_math_reconfig_data_format(const std::uint32_t srca_new_operand, const std::uint32_t srcb_new_operand) {
    TTSIM->unpack_reconfig(int(srca_new_operand), int(srcb_new_operand));
}
template <bool is_fp32_dest_acc_en, bool skip_int8 = false>
inline void llk_math_reconfig_data_format(const std::uint32_t srca_old_operand, const std::uint32_t srca_new_operand,
                                          const std::uint32_t srcb_old_operand, const std::uint32_t srcb_new_operand) {
    (void)srca_old_operand;
    (void)srcb_old_operand;
    TTSIM->unpack_reconfig(int(srca_new_operand), int(srcb_new_operand));
}
