// Element-wise binary operations on the FPU (api/compute/eltwise_binary.h): DST[idst] = A op B.
// acc_to_dest is accepted for the signature's sake; the pinned header documents it as unused on
// Wormhole, so the simulator ignores it too.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

ALWI void add_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false,
                   std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    (void)acc_to_dest;
    TTSIM->fpu_init(ttsim::FpuOp::Add, ttsim::Bcast::None, icb0, icb1, 0);
}
ALWI void sub_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false,
                   std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    (void)acc_to_dest;
    TTSIM->fpu_init(ttsim::FpuOp::Sub, ttsim::Bcast::None, icb0, icb1, 0);
}
ALWI void mul_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = true,
                   std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    (void)acc_to_dest;
    TTSIM->fpu_init(ttsim::FpuOp::Mul, ttsim::Bcast::None, icb0, icb1, 0);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1, std::uint32_t idst) {
    TTSIM->binary_tiles(ttsim::FpuOp::Mul, ttsim::Bcast::None, icb0, icb1, itile0, itile1, idst);
}
ALWI void add_tiles(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1, std::uint32_t idst) {
    TTSIM->binary_tiles(ttsim::FpuOp::Add, ttsim::Bcast::None, icb0, icb1, itile0, itile1, idst);
}
ALWI void sub_tiles(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1, std::uint32_t idst) {
    TTSIM->binary_tiles(ttsim::FpuOp::Sub, ttsim::Bcast::None, icb0, icb1, itile0, itile1, idst);
}

// Dest-reuse binary operations: one operand is the tile already in DST[idst] (moved into srcA for
// DEST_TO_SRCA: result = DST op B; into srcB for DEST_TO_SRCB: result = B op DST), the other is
// unpacked from icb; the result replaces DST[idst].
enum class EltwiseBinaryReuseDestType { NONE = 0, DEST_TO_SRCA = 1, DEST_TO_SRCB = 2 };
namespace ttsim::detail {
constexpr uint32_t kReuseDestSrcA = 1u << 9;
constexpr uint32_t kReuseDestSrcB = 1u << 10;
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void reuse_dest_init(ttsim::FpuOp op, std::uint32_t icb) {
    static_assert(reuse_dest != EltwiseBinaryReuseDestType::NONE,
                  "reuse_dest must be DEST_TO_SRCA or DEST_TO_SRCB; for the two-operand op use *_init(icb0, icb1)");
    TTSIM->fpu_init(op, ttsim::Bcast::None, icb, icb,
                    reuse_dest == EltwiseBinaryReuseDestType::DEST_TO_SRCA ? kReuseDestSrcA : kReuseDestSrcB);
}
}  // namespace ttsim::detail
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void add_reuse_dest_init(std::uint32_t icb, std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttsim::detail::reuse_dest_init<reuse_dest>(ttsim::FpuOp::Add, icb);
}
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void sub_reuse_dest_init(std::uint32_t icb, std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttsim::detail::reuse_dest_init<reuse_dest>(ttsim::FpuOp::Sub, icb);
}
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void mul_reuse_dest_init(std::uint32_t icb, std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttsim::detail::reuse_dest_init<reuse_dest>(ttsim::FpuOp::Mul, icb);
}
template <EltwiseBinaryReuseDestType reuse_dest, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index) {
    TTSIM->binary_tiles(ttsim::FpuOp::Add, ttsim::Bcast::None, in_cb_id, in_cb_id, in_tile_index, in_tile_index,
                        dst_tile_index);
}
template <EltwiseBinaryReuseDestType reuse_dest, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index) {
    TTSIM->binary_tiles(ttsim::FpuOp::Sub, ttsim::Bcast::None, in_cb_id, in_cb_id, in_tile_index, in_tile_index,
                        dst_tile_index);
}
template <EltwiseBinaryReuseDestType reuse_dest, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index) {
    TTSIM->binary_tiles(ttsim::FpuOp::Mul, ttsim::Bcast::None, in_cb_id, in_cb_id, in_tile_index, in_tile_index,
                        dst_tile_index);
}
