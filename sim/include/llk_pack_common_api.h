// The packer's LLK calls kernels issue directly (PACK((llk_pack_...))), Wormhole's llk_pack_common_api.h:
// the same operations as their api/compute counterparts.
#pragma once

#include <cstdint>

#include "ckernel_defs.h"
#include "llk_defs.h"
#include "ttsim/common.h"

inline void llk_pack_reconfig_l1_acc(const std::uint32_t enable) { TTSIM->pack_l1_acc(enable != 0); }
template <bool is_fp32_dest_acc_en>
inline void llk_pack_reconfig_data_format(const std::uint32_t new_output) {
    TTSIM->pack_reconfig(new_output);
}
template <bool is_fp32_dest_acc_en>
inline void llk_pack_reconfig_data_format(const std::uint32_t old_output, const std::uint32_t new_output) {
    (void)old_output;
    TTSIM->pack_reconfig(new_output);
}
// ReLU to zero and no ReLU are modeled (see api/compute/pack.h's pack_relu_config).
inline void llk_pack_relu_config(const ckernel::ReluConfig& config) {
    if (config.get_mode() == ckernel::ReluType::ZERO_RELU || config.get_mode() == ckernel::ReluType::NO_RELU) {
        TTSIM->pack_relu(config.get_mode() == ckernel::ReluType::ZERO_RELU);
    } else {
        TTSIM->fail("llk_pack_relu_config", "not modeled by the simulator: the packer's threshold ReLU modes");
    }
}

// The packer's MOP set-up with a pack width (tt-metal's sdpa: llk_pack_init<mode, zero_output,
// skip_addrmod, skip_strides>(cb, pack_width)): each llk_pack then packs pack_width DST tiles, dst ..
// dst + pack_width - 1, to out tiles idx .. idx + pack_width - 1. Only the default pack mode without
// zeroed output is modeled.
namespace ttsim::detail {
inline thread_local std::uint32_t llk_pack_width = 1;
}  // namespace ttsim::detail
template <ckernel::PackMode mode = ckernel::PackMode::Default, bool zero_output = false,
          bool skip_addrmod_config = false, bool skip_packer_strides = false>
inline void llk_pack_init(const std::uint32_t pack_output, const std::uint32_t pack_width = 1) {
    (void)pack_output;
    if (mode != ckernel::PackMode::Default || zero_output) {
        TTSIM->fail("llk_pack_init", "not modeled by the simulator: a pack mode other than Default, or zero_output");
    }
    if (pack_width == 0) TTSIM->fail("llk_pack_init", "pack width 0");
    ttsim::detail::llk_pack_width = pack_width;
}
template <bool is_fp32_dest_acc_en, bool out_of_order_output = false, ckernel::PackMode mode = ckernel::PackMode::Default>
inline void llk_pack(const std::uint32_t tile_index, const std::uint32_t output, const std::uint32_t output_tile_index = 0) {
    if (mode != ckernel::PackMode::Default) TTSIM->fail("llk_pack", "not modeled by the simulator: a pack mode other than Default");
    for (std::uint32_t k = 0; k < ttsim::detail::llk_pack_width; ++k) {
        TTSIM->pack_tile(int(tile_index + k), int(output), int(output_tile_index + k), out_of_order_output);
    }
}
