// Welford's and two-pass running mean/variance on the SFPU (api/compute/welford.h). These keep running
// statistics in SFPU registers across calls, laid out per DST row and group; the simulator does not
// model that state, so every call stops the run with a message naming it (the declarations match the
// pinned header so the kernels compile).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "api/compute/common.h"

namespace ttsim::detail {
inline void welford_not_modeled(const char* call) {
    TTSIM->fail(call, "not modeled by the simulator: the SFPU's running mean/M2 statistics kept across calls");
}
}  // namespace ttsim::detail

namespace ckernel {

enum class WelfordInitMode : std::uint8_t { ClearStats, PreserveStats };
enum class TwoPassAccumulation : std::uint8_t { ShiftedSum, CentredM2 };
enum class TwoPassAnchor : std::uint8_t { Reuse, Initialise };

template <WelfordInitMode mode = WelfordInitMode::ClearStats>
ALWI void welford_init() { ttsim::detail::welford_not_modeled("welford_init"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void welford_reinit(std::uint32_t cbid, std::uint32_t call_line = __builtin_LINE()) {
    ttsim::detail::welford_not_modeled("welford_reinit");
}
ALWI void welford_clear() { ttsim::detail::welford_not_modeled("welford_clear"); }
ALWI void two_pass_stats_init_shifted() { ttsim::detail::welford_not_modeled("two_pass_stats_init_shifted"); }
template <bool dual_m2 = true>
ALWI void two_pass_stats_update_rows(std::uint32_t input_dst_idx, std::uint32_t start_row, std::uint32_t num_rows) {
    ttsim::detail::welford_not_modeled("two_pass_stats_update_rows");
}
template <TwoPassAccumulation accumulation, TwoPassAnchor anchor = TwoPassAnchor::Reuse, bool dual_accumulator = true>
ALWI void two_pass_stats_update_shifted_rows(std::uint32_t input_dst_idx, std::uint32_t start_row, std::uint32_t num_rows) {
    ttsim::detail::welford_not_modeled("two_pass_stats_update_shifted_rows");
}
template <bool dual_sum = true, bool retain_anchor = false>
ALWI void two_pass_stats_finish_shifted_mean(std::uint32_t reciprocal_bits) {
    ttsim::detail::welford_not_modeled("two_pass_stats_finish_shifted_mean");
}
ALWI void two_pass_stats_clear() { ttsim::detail::welford_not_modeled("two_pass_stats_clear"); }
template <bool dual_m2 = true>
ALWI void two_pass_stats_save_state(std::uint32_t mean_dst_idx) {
    ttsim::detail::welford_not_modeled("two_pass_stats_save_state");
}
template <bool dual_m2 = true>
ALWI void two_pass_stats_finalize_split_mean_to_row(std::uint32_t mean_dst_idx, std::uint32_t reciprocal_bits) {
    ttsim::detail::welford_not_modeled("two_pass_stats_finalize_split_mean_to_row");
}
ALWI void two_pass_stats_save_anchor(std::uint32_t anchor_dst_idx) {
    ttsim::detail::welford_not_modeled("two_pass_stats_save_anchor");
}
ALWI void two_pass_stats_restore_anchor(std::uint32_t anchor_dst_idx) {
    ttsim::detail::welford_not_modeled("two_pass_stats_restore_anchor");
}
ALWI void two_pass_stats_save_anchor_to_state(std::uint32_t mean_dst_idx) {
    ttsim::detail::welford_not_modeled("two_pass_stats_save_anchor_to_state");
}
ALWI void two_pass_stats_restore_anchor_from_state(std::uint32_t mean_dst_idx) {
    ttsim::detail::welford_not_modeled("two_pass_stats_restore_anchor_from_state");
}
template <bool dual_m2 = true>
ALWI void two_pass_stats_combine_block(std::uint32_t mean_dst_idx, std::uint32_t total_reciprocal_bits,
                                       std::uint32_t block_n_bits) {
    ttsim::detail::welford_not_modeled("two_pass_stats_combine_block");
}
template <bool dual_m2 = true, bool store_mean = true>
ALWI void two_pass_stats_finalize_to_row(std::uint32_t mean_dst_idx, std::uint32_t reciprocal_bits) {
    ttsim::detail::welford_not_modeled("two_pass_stats_finalize_to_row");
}
template <bool dual_m2 = true>
ALWI void two_pass_stats_finalize_to_face(std::uint32_t mean_dst_idx, std::uint32_t group_id, std::uint32_t reciprocal_bits) {
    ttsim::detail::welford_not_modeled("two_pass_stats_finalize_to_face");
}
template <bool dual_m2 = true, bool average_variance = true>
ALWI void two_pass_stats_finalize_and_combine_to_face(std::uint32_t mean_dst_idx, std::uint32_t group_id,
                                                      std::uint32_t reciprocal_bits) {
    ttsim::detail::welford_not_modeled("two_pass_stats_finalize_and_combine_to_face");
}
template <std::uint32_t reciprocal_size>
ALWI void welford_update(std::uint32_t input_dst_idx, std::uint32_t start_idx,
                         const std::array<std::uint32_t, reciprocal_size>& reciprocal_lut) {
    ttsim::detail::welford_not_modeled("welford_update");
}
template <std::uint32_t reciprocal_size>
ALWI void welford_update_rows(std::uint32_t input_dst_idx, std::uint32_t start_idx, std::uint32_t start_row,
                              std::uint32_t num_rows, const std::array<std::uint32_t, reciprocal_size>& reciprocal_lut) {
    ttsim::detail::welford_not_modeled("welford_update_rows");
}
ALWI void welford_save_state(std::uint32_t mean_dst_idx) { ttsim::detail::welford_not_modeled("welford_save_state"); }
ALWI void welford_restore_state(std::uint32_t mean_dst_idx) {
    ttsim::detail::welford_not_modeled("welford_restore_state");
}
template <std::size_t reciprocal_size>
ALWI void welford_finalize_to_row(std::uint32_t mean_dst_idx, std::uint32_t scale_idx,
                                  const std::array<std::uint32_t, reciprocal_size>& reciprocal_lut) {
    ttsim::detail::welford_not_modeled("welford_finalize_to_row");
}
template <std::size_t reciprocal_size>
ALWI void welford_finalize_to_face(std::uint32_t mean_dst_idx, std::uint32_t scale_idx,
                                   const std::array<std::uint32_t, reciprocal_size>& reciprocal_lut) {
    ttsim::detail::welford_not_modeled("welford_finalize_to_face");
}
template <bool dual_accumulator>
ALWI void two_pass_stats_switch_group(std::uint32_t mean_dst_idx, std::uint32_t save_group_id,
                                      std::uint32_t restore_group_id) {
    ttsim::detail::welford_not_modeled("two_pass_stats_switch_group");
}
ALWI void welford_save_state(std::uint32_t mean_dst_idx, std::uint32_t group_id) {
    ttsim::detail::welford_not_modeled("welford_save_state");
}
ALWI void welford_restore_state(std::uint32_t mean_dst_idx, std::uint32_t group_id) {
    ttsim::detail::welford_not_modeled("welford_restore_state");
}
template <std::size_t reciprocal_size>
ALWI void welford_finalize_to_face(std::uint32_t mean_dst_idx, std::uint32_t group_id, std::uint32_t scale_idx,
                                   const std::array<std::uint32_t, reciprocal_size>& reciprocal_lut) {
    ttsim::detail::welford_not_modeled("welford_finalize_to_face");
}

}  // namespace ckernel
