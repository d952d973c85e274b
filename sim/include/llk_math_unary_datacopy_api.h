// The math half of a copy as kernels call it directly (Wormhole's llk_math_unary_datacopy_api.h). The
// simulator's copy is configured by the unpack half (llk_unpack_A_init), which the API always calls
// with it; the math init has nothing of its own to set.
#pragma once

#include <cstdint>

#include "ckernel_defs.h"
#include "llk_defs.h"
#include "ttsim/common.h"

template <ckernel::DataCopyType type, bool is_fp32_dest_acc_en,
          ckernel::BroadcastType src_b_bcast_type = ckernel::BroadcastType::NONE, bool is_int_fpu_en = false,
          ckernel::PackMode pack_mode = ckernel::PackMode::Default>
inline void llk_math_eltwise_unary_datacopy_init(const std::uint32_t operand = 0) {
    static_assert(type == ckernel::DataCopyType::A2D && src_b_bcast_type == ckernel::BroadcastType::NONE,
                  "the simulator models llk_math_eltwise_unary_datacopy_init for srcA copies only");
    (void)TTSIM->cb_page_size(operand);
}
