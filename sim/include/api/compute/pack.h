// The packer (api/compute/pack.h): DST tile -> circular buffer, converting to the CB's format.
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

ALWI void pack_init(std::uint32_t ocb, std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    TTSIM->pack_reconfig(ocb);
}
// With out_of_order_output the tile goes to output_tile_index of the reserved pages; otherwise to
// the next page after the ones already packed since the last cb_push_back.
template <bool out_of_order_output = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_tile(std::uint32_t ifrom_dst, std::uint32_t icb, std::uint32_t output_tile_index = 0) {
    TTSIM->pack_tile(ifrom_dst, icb, output_tile_index, out_of_order_output);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_block(std::uint32_t ifrom_dst, std::uint32_t icb, std::uint32_t ntiles) {
    for (std::uint32_t i = 0; i < ntiles; ++i) {
        TTSIM->pack_tile(ifrom_dst + i, icb, 0, false);
    }
}
// Packer L1 accumulation (1: on, 0: off): while on, pack_tile adds the DST tile onto the tile already
// at its destination in the CB (the sum rounded to the CB's format) instead of overwriting it.
ALWI void pack_reconfig_l1_acc(const std::uint32_t l1_acc_en) { TTSIM->pack_l1_acc(l1_acc_en != 0); }
// The packer's ReLU stage: ReLU to zero (negative values packed as 0) and no ReLU are modeled; the
// threshold modes stop the run rather than pack values the device would have clamped differently.
ALWI void pack_relu_config(const ReluConfig& config) {
    if (config.get_mode() == ReluType::ZERO_RELU || config.get_mode() == ReluType::NO_RELU) {
        TTSIM->pack_relu(config.get_mode() == ReluType::ZERO_RELU);
    } else {
        TTSIM->fail("pack_relu_config", "not modeled by the simulator: the packer's threshold ReLU modes");
    }
}

}  // namespace ckernel
