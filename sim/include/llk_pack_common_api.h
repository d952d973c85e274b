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
