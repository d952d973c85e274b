// The unpack half of the FPU reduction as kernels call it directly (Wormhole's
// llk_unpack_AB_reduce_api.h): the init configures the reduction as reduce_init does.
#pragma once

#include <cstdint>

#include "api/compute/reduce.h"

template <ckernel::PoolType pool_type, ckernel::ReduceDim reduce_dim>
inline void llk_unpack_AB_reduce_init(const std::uint32_t operandA, const std::uint32_t operandB) {
    TTSIM->fpu_init(ttsim::FpuOp::Reduce, ttsim::Bcast::None, operandA, operandB,
                    ttsim::detail::reduce_flags<pool_type, reduce_dim>());
}
