// Data-format reconfiguration of the unpacker and packer (api/compute/reconfig_data_format.h).
#pragma once

#include "api/compute/common.h"

ALWI void reconfig_data_format(const uint32_t icb0_new_operand, const uint32_t icb1_new_operand) {
    TTSIM->unpack_reconfig(icb0_new_operand, icb1_new_operand);
}
ALWI void reconfig_data_format(
    const uint32_t icb0_old_operand, const uint32_t icb0_new_operand, const uint32_t icb1_old_operand,
    const uint32_t icb1_new_operand) {
    (void)icb0_old_operand;
    (void)icb1_old_operand;
    TTSIM->unpack_reconfig(icb0_new_operand, icb1_new_operand);
}
ALWI void reconfig_data_format_srca(const uint32_t srca_new_operand) { TTSIM->unpack_reconfig(srca_new_operand, -1); }
ALWI void reconfig_data_format_srca(const uint32_t srca_old_operand, const uint32_t srca_new_operand) {
    (void)srca_old_operand;
    TTSIM->unpack_reconfig(srca_new_operand, -1);
}
ALWI void reconfig_data_format_srcb(const uint32_t srcb_new_operand) { TTSIM->unpack_reconfig(-1, srcb_new_operand); }
ALWI void reconfig_data_format_srcb(const uint32_t srcb_old_operand, const uint32_t srcb_new_operand) {
    (void)srcb_old_operand;
    TTSIM->unpack_reconfig(-1, srcb_new_operand);
}
ALWI void pack_reconfig_data_format(const uint32_t new_cb_id) { TTSIM->pack_reconfig(new_cb_id); }
ALWI void pack_reconfig_data_format(const uint32_t old_cb_id, const uint32_t new_cb_id) {
    (void)old_cb_id;
    TTSIM->pack_reconfig(new_cb_id);
}
