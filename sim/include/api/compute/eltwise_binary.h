// Element-wise binary operations on the FPU (api/compute/eltwise_binary.h): DST[idst] = A op B.
// acc_to_dest is accepted for the signature's sake; the pinned header documents it as unused on
// Wormhole, so the simulator ignores it too.
#pragma once

#include "api/compute/common.h"

namespace ttsim::detail {
// The FPU operation an EltwiseBinaryType names; DIV and LESS have no FPU path on Wormhole.
constexpr ttsim::FpuOp fpu_op_of(ckernel::EltwiseBinaryType t) {
    return t == ckernel::EltwiseBinaryType::ELWADD   ? ttsim::FpuOp::Add
           : t == ckernel::EltwiseBinaryType::ELWSUB ? ttsim::FpuOp::Sub
           : t == ckernel::EltwiseBinaryType::ELWMUL ? ttsim::FpuOp::Mul
                                                     : ttsim::FpuOp::None;
}
// tt-metal's BroadcastType and the simulator's Bcast share their numbering.
constexpr ttsim::Bcast bcast_of(ckernel::BroadcastType b) { return static_cast<ttsim::Bcast>(static_cast<uint32_t>(b)); }
// Dest reuse: one operand is DST[idst] itself, moved into srcA (bit 9) or srcB (bit 10).
constexpr uint32_t kReuseDestSrcA = 1u << 9;
constexpr uint32_t kReuseDestSrcB = 1u << 10;
}  // namespace ttsim::detail

namespace ckernel {

// full_init also reprograms the unpackers; the simulator's unpack needs no separate set-up, so both
// forms configure the same operation.
template <bool full_init, EltwiseBinaryType eltwise_binary_type>
ALWI void binary_tiles_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false,
                            std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    (void)acc_to_dest;
    static_assert(ttsim::detail::fpu_op_of(eltwise_binary_type) != ttsim::FpuOp::None,
                  "only ELWADD, ELWSUB and ELWMUL are FPU binary operations");
    TTSIM->fpu_init(ttsim::detail::fpu_op_of(eltwise_binary_type), ttsim::Bcast::None, icb0, icb1, 0);
}
ALWI void add_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false,
                   std::uint32_t call_line = __builtin_LINE()) {
    binary_tiles_init<true, EltwiseBinaryType::ELWADD>(icb0, icb1, acc_to_dest, call_line);
}
ALWI void sub_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false,
                   std::uint32_t call_line = __builtin_LINE()) {
    binary_tiles_init<true, EltwiseBinaryType::ELWSUB>(icb0, icb1, acc_to_dest, call_line);
}
ALWI void mul_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = true,
                   std::uint32_t call_line = __builtin_LINE()) {
    binary_tiles_init<true, EltwiseBinaryType::ELWMUL>(icb0, icb1, acc_to_dest, call_line);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1, std::uint32_t idst) {
    TTSIM->binary_tiles(ttsim::FpuOp::Mul, ttsim::Bcast::None, icb0, icb1, itile0, itile1, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1, std::uint32_t idst) {
    TTSIM->binary_tiles(ttsim::FpuOp::Add, ttsim::Bcast::None, icb0, icb1, itile0, itile1, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_tiles(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1, std::uint32_t idst) {
    TTSIM->binary_tiles(ttsim::FpuOp::Sub, ttsim::Bcast::None, icb0, icb1, itile0, itile1, idst);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_block(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t start_itile0, std::uint32_t start_itile1,
                    std::uint32_t start_idst, std::uint32_t ntiles) {
    for (std::uint32_t i = 0; i < ntiles; ++i) {
        mul_tiles<is_fp32_dest_acc_en>(icb0, icb1, start_itile0 + i, start_itile1 + i, start_idst + i);
    }
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_block(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t start_itile0, std::uint32_t start_itile1,
                    std::uint32_t start_idst, std::uint32_t ntiles) {
    for (std::uint32_t i = 0; i < ntiles; ++i) {
        add_tiles<is_fp32_dest_acc_en>(icb0, icb1, start_itile0 + i, start_itile1 + i, start_idst + i);
    }
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_block(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t start_itile0, std::uint32_t start_itile1,
                    std::uint32_t start_idst, std::uint32_t ntiles) {
    for (std::uint32_t i = 0; i < ntiles; ++i) {
        sub_tiles<is_fp32_dest_acc_en>(icb0, icb1, start_itile0 + i, start_itile1 + i, start_idst + i);
    }
}

// Dest-reuse binary operations: one operand is the tile already in DST[idst] (moved into srcA for
// DEST_TO_SRCA: result = DST op B; into srcB for DEST_TO_SRCB: result = B op DST), the other is
// unpacked from icb; the result replaces DST[idst].
namespace detail {
template <EltwiseBinaryType eltwise_binary_type, EltwiseBinaryReuseDestType reuse_dest>
ALWI void binary_reuse_dest_init(std::uint32_t icb, std::uint32_t call_line) {
    (void)call_line;
    TTSIM->fpu_init(ttsim::detail::fpu_op_of(eltwise_binary_type), ttsim::Bcast::None, icb, icb,
                    reuse_dest == EltwiseBinaryReuseDestType::DEST_TO_SRCA ? ttsim::detail::kReuseDestSrcA
                                                                           : ttsim::detail::kReuseDestSrcB);
}
template <EltwiseBinaryType eltwise_binary_type, EltwiseBinaryReuseDestType reuse_dest,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void binary_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index) {
    TTSIM->binary_tiles(ttsim::detail::fpu_op_of(eltwise_binary_type), ttsim::Bcast::None, in_cb_id, in_cb_id,
                        in_tile_index, in_tile_index, dst_tile_index);
}
}  // namespace detail

#define TTSIM_REUSE_DEST_OP(NAME, TYPE)                                                                         \
    template <EltwiseBinaryReuseDestType reuse_dest>                                                            \
    ALWI void NAME##_reuse_dest_init(std::uint32_t icb, std::uint32_t call_line = __builtin_LINE()) {           \
        static_assert(reuse_dest != EltwiseBinaryReuseDestType::NONE,                                          \
                      "reuse_dest must be DEST_TO_SRCA or DEST_TO_SRCB; for the two-operand op use " #NAME     \
                      "_init(icb0, icb1)");                                                                     \
        detail::binary_reuse_dest_init<EltwiseBinaryType::TYPE, reuse_dest>(icb, call_line);                   \
    }                                                                                                           \
    template <EltwiseBinaryReuseDestType reuse_dest, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>                 \
    ALWI void NAME##_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index,                     \
                                      std::uint32_t dst_tile_index) {                                           \
        detail::binary_reuse_dest_tiles<EltwiseBinaryType::TYPE, reuse_dest, is_fp32_dest_acc_en>(              \
            in_cb_id, in_tile_index, dst_tile_index);                                                           \
    }
TTSIM_REUSE_DEST_OP(add, ELWADD)
TTSIM_REUSE_DEST_OP(sub, ELWSUB)
TTSIM_REUSE_DEST_OP(mul, ELWMUL)
#undef TTSIM_REUSE_DEST_OP

}  // namespace ckernel

// The LLK halves, which kernels may call directly.
#include "llk_math_binary_api.h"
#include "llk_unpack_AB_api.h"
