// Fault: copy_tile of the second tile of a CB after waiting for only the first.
// Runtime args: 0 number of tiles (as tests/kernels/compute_op.cpp).
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    compute_kernel_hw_startup(cb_a, cb_out);
    copy_init(cb_a);
    cb_wait_front(cb_a, 1);
    // Let the reader get ahead, so that tile 1 has been pushed (but still not waited for).
    for (int i = 0; i < 200; ++i) {
        tile_regs_acquire();
        tile_regs_commit();
        tile_regs_wait();
        tile_regs_release();
    }
    cb_reserve_back(cb_out, 1);
    tile_regs_acquire();
    copy_tile(cb_a, 1, 0);
    tile_regs_commit();
    tile_regs_wait();
    pack_tile(0, cb_out);
    tile_regs_release();
}
