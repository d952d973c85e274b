// The math half of an FPU binary operation as kernels call it directly (Wormhole's
// llk_math_binary_api.h): the init configures the operation, with its broadcast, as the
// {add,sub,mul}[_bcast_*]_init calls do. Its fidelity template argument is the one the API passes
// (MATH_FIDELITY for multiplies, LoFi otherwise), which the simulator's FPU model applies the same way.
#pragma once

#include <cstdint>

#include "api/compute/eltwise_binary.h"

template <ckernel::EltwiseBinaryType eltwise_binary_type, ckernel::BroadcastType src_b_bcast_type,
          ckernel::MathFidelity math_fidelity,
          ckernel::EltwiseBinaryReuseDestType binary_reuse_dest = ckernel::EltwiseBinaryReuseDestType::NONE>
inline void llk_math_eltwise_binary_init(const std::uint32_t operand_A, const std::uint32_t operand_B,
                                         const bool acc_to_dest = false) {
    (void)acc_to_dest;
    static_assert(ttsim::detail::fpu_op_of(eltwise_binary_type) != ttsim::FpuOp::None,
                  "only ELWADD, ELWSUB and ELWMUL are FPU binary operations");
    const uint32_t flags = binary_reuse_dest == ckernel::EltwiseBinaryReuseDestType::DEST_TO_SRCA   ? ttsim::detail::kReuseDestSrcA
                           : binary_reuse_dest == ckernel::EltwiseBinaryReuseDestType::DEST_TO_SRCB ? ttsim::detail::kReuseDestSrcB
                                                                                                    : 0u;
    TTSIM->fpu_init(ttsim::detail::fpu_op_of(eltwise_binary_type), ttsim::detail::bcast_of(src_b_bcast_type), operand_A,
                    operand_B, flags);
}
