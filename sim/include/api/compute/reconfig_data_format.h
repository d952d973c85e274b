// Data-format reconfiguration of the unpacker and packer (api/compute/reconfig_data_format.h). The
// "old" operands of the two-argument forms only let the device skip a reconfiguration that changes
// nothing; the simulator takes the new operand either way. Tile-shape reconfiguration is a no-op here
// because every CB holds full 32x32 tiles (the simulator supports no other tile shape).
#pragma once

#include "api/compute/common_globals.h"
#include "api/compute/src_order.h"

namespace ckernel {

namespace detail {
ALWI void reconfig_srcs(uint32_t srca, uint32_t srcb) { TTSIM->unpack_reconfig(int(srca), int(srcb)); }
}  // namespace detail

template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format(const uint32_t icb0_new_operand, const uint32_t icb1_new_operand) {
    constexpr bool reverse = src_order == SrcOrder::Reverse;
    detail::reconfig_srcs(reverse ? icb1_new_operand : icb0_new_operand, reverse ? icb0_new_operand : icb1_new_operand);
}
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format(
    const uint32_t icb0_old_operand, const uint32_t icb0_new_operand, const uint32_t icb1_old_operand,
    const uint32_t icb1_new_operand) {
    (void)icb0_old_operand;
    (void)icb1_old_operand;
    reconfig_data_format<src_order>(icb0_new_operand, icb1_new_operand);
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

// Format and tile shape together: with 32x32 tiles everywhere, the same as the format alone.
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_full_operand(const uint32_t icb0_new_operand, const uint32_t icb1_new_operand) {
    reconfig_data_format<src_order>(icb0_new_operand, icb1_new_operand);
}
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_full_operand(
    const uint32_t icb0_old_operand, const uint32_t icb0_new_operand, const uint32_t icb1_old_operand,
    const uint32_t icb1_new_operand) {
    reconfig_data_format<src_order>(icb0_old_operand, icb0_new_operand, icb1_old_operand, icb1_new_operand);
}
ALWI void reconfig_full_operand_srca(const uint32_t srca_new_operand) { reconfig_data_format_srca(srca_new_operand); }
ALWI void reconfig_full_operand_srca(const uint32_t srca_old_operand, const uint32_t srca_new_operand) {
    reconfig_data_format_srca(srca_old_operand, srca_new_operand);
}
ALWI void reconfig_full_operand_srcb(const uint32_t srcb_new_operand) { reconfig_data_format_srcb(srcb_new_operand); }
ALWI void reconfig_full_operand_srcb(const uint32_t srcb_old_operand, const uint32_t srcb_new_operand) {
    reconfig_data_format_srcb(srcb_old_operand, srcb_new_operand);
}

// Tile shape alone: every CB holds 32x32 tiles in the simulator, so there is nothing to change; the
// operands are still checked to be CBs of the program.
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_tile_shape(const uint32_t icb0_new_operand, const uint32_t icb1_new_operand) {
    (void)TTSIM->cb_page_size(icb0_new_operand);
    (void)TTSIM->cb_page_size(icb1_new_operand);
}
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_tile_shape(
    const uint32_t icb0_old_operand, const uint32_t icb0_new_operand, const uint32_t icb1_old_operand,
    const uint32_t icb1_new_operand) {
    (void)icb0_old_operand;
    (void)icb1_old_operand;
    reconfig_tile_shape<src_order>(icb0_new_operand, icb1_new_operand);
}
ALWI void reconfig_tile_shape_srca(const uint32_t srca_new_operand) { (void)TTSIM->cb_page_size(srca_new_operand); }
ALWI void reconfig_tile_shape_srca(const uint32_t srca_old_operand, const uint32_t srca_new_operand) {
    (void)srca_old_operand;
    reconfig_tile_shape_srca(srca_new_operand);
}
ALWI void reconfig_tile_shape_srcb(const uint32_t srcb_new_operand) { (void)TTSIM->cb_page_size(srcb_new_operand); }
ALWI void reconfig_tile_shape_srcb(const uint32_t srcb_old_operand, const uint32_t srcb_new_operand) {
    (void)srcb_old_operand;
    reconfig_tile_shape_srcb(srcb_new_operand);
}

// The skip_int8 forms leave Int8 configuration alone on the device; the simulator has no Int8 CBs.
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format_skip_int8(const uint32_t icb0_new_operand, const uint32_t icb1_new_operand) {
    reconfig_data_format<src_order>(icb0_new_operand, icb1_new_operand);
}
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format_skip_int8(
    const uint32_t icb0_old_operand, const uint32_t icb0_new_operand, const uint32_t icb1_old_operand,
    const uint32_t icb1_new_operand) {
    reconfig_data_format<src_order>(icb0_old_operand, icb0_new_operand, icb1_old_operand, icb1_new_operand);
}
ALWI void reconfig_data_format_srca_skip_int8(const uint32_t srca_new_operand) {
    reconfig_data_format_srca(srca_new_operand);
}
ALWI void reconfig_data_format_srca_skip_int8(const uint32_t srca_old_operand, const uint32_t srca_new_operand) {
    reconfig_data_format_srca(srca_old_operand, srca_new_operand);
}
ALWI void reconfig_data_format_srcb_skip_int8(const uint32_t srcb_new_operand) {
    reconfig_data_format_srcb(srcb_new_operand);
}
ALWI void reconfig_data_format_srcb_skip_int8(const uint32_t srcb_old_operand, const uint32_t srcb_new_operand) {
    reconfig_data_format_srcb(srcb_old_operand, srcb_new_operand);
}

template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t new_cb_id) {
    TTSIM->pack_reconfig(new_cb_id);
}
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t old_cb_id, const uint32_t new_cb_id) {
    (void)old_cb_id;
    TTSIM->pack_reconfig(new_cb_id);
}

}  // namespace ckernel
