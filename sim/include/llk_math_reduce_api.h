// The math half of the FPU reduction as kernels call it directly (Wormhole's llk_math_reduce_api.h).
// The init configures the reduction as reduce_init does; the operands come with the unpacker's
// llk_unpack_AB_reduce, which is where the simulator computes the reduction (reduce_tile), so the math
// call itself is accepted only as part of reduce_tile (see api/compute/reduce.h).
#pragma once

#include <cstdint>

#include "api/compute/reduce.h"

template <ckernel::PoolType type, ckernel::ReduceDim dim, bool is_fp32_dest_acc_en, ckernel::MathFidelity math_fidelity>
inline void llk_math_reduce_init(const std::uint32_t operandA, const std::uint32_t operandB) {
    TTSIM->fpu_init(ttsim::FpuOp::Reduce, ttsim::Bcast::None, operandA, operandB, ttsim::detail::reduce_flags<type, dim>());
}
inline void llk_math_reduce_uninit([[maybe_unused]] const std::uint32_t operandA = 0) {
    TTSIM->fpu_init(ttsim::FpuOp::None, ttsim::Bcast::None, -1, -1, 0);
}
