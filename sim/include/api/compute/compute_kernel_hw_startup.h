// One-time hardware set-up at the start of a compute kernel (api/compute/compute_kernel_hw_startup.h):
// the unpackers' srcA/srcB formats, the packer's output format.
#pragma once

#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/common_globals.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/reg_api.h"
#include "api/compute/src_order.h"
#include "llk_math_common_api.h"
#include "llk_pack_common_api.h"
#include "llk_unpack_common_api.h"

namespace ckernel {

template <SrcOrder src_order = SrcOrder::Regular>
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    if constexpr (src_order == SrcOrder::Reverse) {
        TTSIM->hw_startup(icb1, icb0, ocb);
    } else {
        TTSIM->hw_startup(icb0, icb1, ocb);
    }
}
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t ocb) { TTSIM->hw_startup(icb0, icb0, ocb); }

// The DST accumulation mode is fixed per program (ComputeConfig.fp32_dest_acc_en); switching it inside a
// kernel reformats DST, which the simulator does not model.
ALWI void enable_fp32_dest_acc() {
    TTSIM->fail("enable_fp32_dest_acc", "not modeled by the simulator: DST's format is fixed by the compute config");
}
ALWI void disable_fp32_dest_acc() {
    TTSIM->fail("disable_fp32_dest_acc", "not modeled by the simulator: DST's format is fixed by the compute config");
}
template <bool enable>
ALWI void set_fp32_dest_acc() {
    if constexpr (enable != static_cast<bool>(DST_ACCUM_MODE)) {
        if constexpr (enable) {
            enable_fp32_dest_acc();
        } else {
            disable_fp32_dest_acc();
        }
    }
}
template <bool enable>
ALWI void restore_fp32_dest_acc() {
    if constexpr (enable != static_cast<bool>(DST_ACCUM_MODE)) {
        if constexpr (static_cast<bool>(DST_ACCUM_MODE)) {
            enable_fp32_dest_acc();
        } else {
            disable_fp32_dest_acc();
        }
    }
}

}  // namespace ckernel
