// Test kernel: reads its runtime args and common runtime args through their L1 addresses
// (get_arg_addr / get_common_arg_addr, as kernels that take arrays of args do) and checks each
// against get_arg_val / get_common_arg_val (a mismatch trips an ASSERT).
//
// Runtime args: 0 the number of common args, then any values.
#include "api/dataflow/dataflow_api.h"
#include "api/debug/assert.h"

void kernel_main() {
    const uint32_t num_common = get_arg_val<uint32_t>(0);
    auto* args = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(uintptr_t(get_arg_addr(0)));
    ASSERT(args[0] == num_common);
    for (uint32_t i = 1; i < 4; ++i) ASSERT(args[i] == get_arg_val<uint32_t>(i));
    auto* common = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(uintptr_t(get_common_arg_addr(0)));
    for (uint32_t i = 0; i < num_common; ++i) ASSERT(common[i] == get_common_arg_val<uint32_t>(i));
}
