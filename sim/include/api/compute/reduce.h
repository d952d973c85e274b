// Reductions on the FPU (api/compute/reduce.h). The result of REDUCE_ROW lands in column 0 of the
// DST tile, REDUCE_COL in row 0, REDUCE_SCALAR in element [0][0]; the value is multiplied by the
// scaler tile's element [0][0] and accumulated into what DST already holds (SUM and AVG add, MAX takes
// the maximum), so several reduce_tile calls into one DST tile reduce across tiles.
#pragma once

#include "api/compute/common.h"

namespace ttsim::detail {
template <ckernel::PoolType reduce_type, ckernel::ReduceDim reduce_dim>
constexpr uint32_t reduce_flags() {
    return uint32_t(reduce_type) | (uint32_t(reduce_dim) << 4);
}
}  // namespace ttsim::detail

namespace ckernel {

template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_init(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t ocb,
                      std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    (void)ocb;
    TTSIM->fpu_init(ttsim::FpuOp::Reduce, ttsim::Bcast::None, icb, icb_scaler,
                    ttsim::detail::reduce_flags<reduce_type, reduce_dim>());
}
ALWI void reduce_uninit(std::uint32_t icb = 0) {
    (void)icb;
    TTSIM->fpu_init(ttsim::FpuOp::None, ttsim::Bcast::None, -1, -1, 0);
}
template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_tile(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t itile, std::uint32_t itile_scaler,
                      std::uint32_t idst) {
    TTSIM->reduce_tile(int(reduce_type), int(reduce_dim), icb, icb_scaler, itile, itile_scaler, idst);
}
template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t start_itile, std::uint32_t itile_scaler,
                       std::uint32_t start_idst, std::uint32_t ntiles) {
    for (std::uint32_t i = 0; i < ntiles; ++i) {
        reduce_tile<reduce_type, reduce_dim, is_fp32_dest_acc_en>(icb, icb_scaler, start_itile + i, itile_scaler,
                                                                  start_idst + i);
    }
}
// The math half alone, on operands some other unpack call left in srcA/srcB: the simulator keeps no
// srcA/srcB contents between calls, so this stops the run.
template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_tile_math(std::uint32_t idst, std::uint32_t num_faces = 4) {
    (void)idst;
    (void)num_faces;
    TTSIM->fail("reduce_tile_math", "not modeled by the simulator: srcA/srcB contents left by a separate unpack");
}

}  // namespace ckernel

// The LLK halves of the reduction, which kernels may call directly.
#include "llk_math_reduce_api.h"
#include "llk_pack_reduce_api.h"
#include "llk_unpack_AB_reduce_api.h"
