// Untilize through the packer with Blackhole's faster unpack/math sequence (api/compute/experimental/
// fast_untilize.h). On Wormhole, the architecture the simulator models, every call is the matching
// pack_untilize call, as in the pinned header.
#pragma once

#include "api/compute/pack_untilize.h"

namespace ckernel {

template <std::uint32_t full_ct_dim, bool configure_remap, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_untilize_init_impl(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    static_assert(full_ct_dim > 0, "fast_untilize full_ct_dim must be greater than 0");
    pack_untilize_init<full_ct_dim, full_ct_dim, is_fp32_dest_acc_en>(icb, ocb, call_line);
}
template <std::uint32_t full_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_untilize_init(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    fast_untilize_init_impl<full_ct_dim, true, is_fp32_dest_acc_en>(icb, ocb, call_line);
}
template <std::uint32_t full_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_untilize_init_skip_remap(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    fast_untilize_init_impl<full_ct_dim, false, is_fp32_dest_acc_en>(icb, ocb, call_line);
}
template <std::uint32_t full_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_untilize_block(uint32_t icb, uint32_t ocb, uint32_t input_tile_index = 0, uint32_t output_tile_index = 0) {
    static_assert(full_ct_dim > 0, "fast_untilize full_ct_dim must be greater than 0");
    (void)input_tile_index;
    (void)output_tile_index;
    pack_untilize_block<full_ct_dim, full_ct_dim, is_fp32_dest_acc_en>(icb, 1, ocb, 0);
}
template <std::uint32_t full_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_untilize_uninit(uint32_t ocb) {
    static_assert(full_ct_dim > 0, "fast_untilize full_ct_dim must be greater than 0");
    pack_untilize_uninit<is_fp32_dest_acc_en>(ocb);
}

}  // namespace ckernel
