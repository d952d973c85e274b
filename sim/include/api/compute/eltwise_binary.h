// Element-wise binary operations on the FPU (api/compute/eltwise_binary.h): DST[idst] = A op B.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

namespace ttsim::detail {
constexpr uint32_t kAccToDest = 1u << 8;
}

ALWI void add_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false,
                   std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    TTSIM->fpu_init(ttsim::FpuOp::Add, ttsim::Bcast::None, icb0, icb1, acc_to_dest ? ttsim::detail::kAccToDest : 0);
}
ALWI void sub_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false,
                   std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    TTSIM->fpu_init(ttsim::FpuOp::Sub, ttsim::Bcast::None, icb0, icb1, acc_to_dest ? ttsim::detail::kAccToDest : 0);
}
ALWI void mul_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false,
                   std::uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    TTSIM->fpu_init(ttsim::FpuOp::Mul, ttsim::Bcast::None, icb0, icb1, acc_to_dest ? ttsim::detail::kAccToDest : 0);
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
