// Fault: pushes a page of c_16, then L1-accumulates onto that same page without a reservation while
// the writer consumes c_16: on the device the writer may send the page before or after the rewrite.
// Runtime args: 0 number of tiles (as tests/kernels/compute_op.cpp).
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/pack.h"

void kernel_main() {
    constexpr uint32_t cb_in = tt::CBIndex::c_0;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t count = get_arg_val<uint32_t>(0);
    compute_kernel_hw_startup(cb_in, cb_out);
    copy_init(cb_in);
    for (uint32_t t = 0; t < count; ++t) {
        cb_wait_front(cb_in, 1);
        tile_regs_acquire();
        copy_tile(cb_in, 0, 0);
        tile_regs_commit();
        cb_reserve_back(cb_out, 1);
        tile_regs_wait();
        pack_tile(0, cb_out);
        cb_push_back(cb_out, 1);
        // After the second push the write pointer is back on slot 0 of c_16's two pages, so output tile
        // index 1 is the page just pushed.
        if (t == 1) {
            pack_reconfig_l1_acc(1);
            pack_tile<true>(0, cb_out, 1);
            pack_reconfig_l1_acc(0);
        }
        tile_regs_release();
        cb_pop_front(cb_in, 1);
    }
}
