// Set-up for unary operations (api/compute/eltwise_unary/eltwise_unary.h): the hardware start-up and
// the copy (unpack to DST) configuration that a unary kernel's copy_tile needs.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void unary_op_init_common(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    compute_kernel_hw_startup(icb, ocb);
    copy_init<is_fp32_dest_acc_en>(icb, 0, 0, call_line);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void init_sfpu(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    compute_kernel_hw_startup(icb, ocb);
    copy_init<is_fp32_dest_acc_en>(icb, 0, 0, call_line);
}

}  // namespace ckernel
