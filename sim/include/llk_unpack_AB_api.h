// The unpack half of an FPU binary operation as kernels call it directly (Wormhole's
// llk_unpack_AB_api.h). The simulator's unpack needs no set-up of its own: the operation and its
// broadcast are configured by the math half (llk_math_eltwise_binary_init), which the API calls with it;
// this checks that the operands are CBs of the program.
#pragma once

#include <cstdint>

#include "llk_defs.h"
#include "ttsim/common.h"

template <ckernel::BroadcastType BType = ckernel::BroadcastType::NONE>
inline void llk_unpack_AB_init(const std::uint32_t operandA, const std::uint32_t operandB,
                               const std::uint32_t transpose = 0) {
    if (transpose != 0) TTSIM->fail("llk_unpack_AB_init", "not modeled by the simulator: transposed srcA in a binary op");
    (void)TTSIM->cb_page_size(operandA);
    (void)TTSIM->cb_page_size(operandB);
}
