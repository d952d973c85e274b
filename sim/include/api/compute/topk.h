// Top-k on the SFPU (api/compute/topk.h): declared only. tt-llk sorts across the rows of a pair of DST
// tiles in bitonic phases, which is not an elementwise function; each call stops the run.
#pragma once

#include "api/compute/compute_kernel_api.h"
#include "ttsim/sfpu.h"

namespace ckernel {

enum class TopkTieOrder : std::uint8_t { Unset, Ascending, Descending };

// The tie order follows the sort's global direction.
constexpr TopkTieOrder topk_tie_order_from_global_direction(bool descending) {
    return descending ? TopkTieOrder::Descending : TopkTieOrder::Ascending;
}

template <bool stable_sort = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE, bool fused = false, bool rank_stamped = false,
          TopkTieOrder tie_order = TopkTieOrder::Unset>
ALWI void topk_local_sort(uint32_t, int, int, int i_start_phase = 0, int i_end_step = 0, int i_start_step = 0) { TTSIM_NOT_MODELED("topk_local_sort", "top-k sorting inside DST"); }
template <bool idir = false, bool stable_sort = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE, bool fused = false,
          bool rank_stamped = false, TopkTieOrder tie_order = TopkTieOrder::Unset, std::uint32_t tag_bits = 16>
ALWI void topk_merge(uint32_t, int, int) { TTSIM_NOT_MODELED("topk_merge", "top-k sorting inside DST"); }
template <bool stable_sort = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE, bool fused = false, bool rank_stamped = false,
          TopkTieOrder tie_order = TopkTieOrder::Unset>
ALWI void topk_rebuild(uint32_t, bool, int, int, int, int) { TTSIM_NOT_MODELED("topk_rebuild", "top-k sorting inside DST"); }
template <bool fused = false, bool rank_stamped = false, std::uint32_t tag_bits = 16>
ALWI void topk_tile_init() { TTSIM_NOT_MODELED("topk_tile_init", "top-k sorting inside DST"); }
template <bool largest>
ALWI void topk_fuse_tile(uint32_t) { TTSIM_NOT_MODELED("topk_fuse_tile", "top-k sorting inside DST"); }
template <bool largest>
ALWI void topk_defuse_tile(uint32_t, uint32_t) { TTSIM_NOT_MODELED("topk_defuse_tile", "top-k sorting inside DST"); }
template <bool largest, std::uint32_t tag_bits = 16>
ALWI void topk_stamp_local_positions(std::uint32_t) { TTSIM_NOT_MODELED("topk_stamp_local_positions", "top-k sorting inside DST"); }
template <bool largest, std::uint32_t tag_bits = 16>
ALWI void topk_stamp_tile_rank_range(uint32_t, uint32_t, uint32_t) { TTSIM_NOT_MODELED("topk_stamp_tile_rank_range", "top-k sorting inside DST"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void topk_canonicalize_negzero_values(uint32_t) { TTSIM_NOT_MODELED("topk_canonicalize_negzero_values", "top-k sorting inside DST"); }
template <std::uint32_t tag_bits = 16, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void topk_strip_rank_tags(std::uint32_t) { TTSIM_NOT_MODELED("topk_strip_rank_tags", "top-k sorting inside DST"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void topk_finalize_uint16_indices(std::uint32_t) { TTSIM_NOT_MODELED("topk_finalize_uint16_indices", "top-k sorting inside DST"); }
ALWI void topk_uint16_prepare_value_tile_for_pack(uint32_t) { TTSIM_NOT_MODELED("topk_uint16_prepare_value_tile_for_pack", "top-k sorting inside DST"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void topk_uint16_move_dest_tile_to_pack_half(uint32_t) { TTSIM_NOT_MODELED("topk_uint16_move_dest_tile_to_pack_half", "top-k sorting inside DST"); }

}  // namespace ckernel
