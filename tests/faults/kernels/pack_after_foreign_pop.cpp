// Fault: after pushing a page of c_16 that the writer then pops, packs a second tile into that freed
// page without cb_reserve_back: nothing orders the writer's pop before the pack on the device (the
// writer may still be sending the page), so the simulator stops it.
// Runtime args: 0 number of tiles (as tests/kernels/compute_op.cpp).
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    constexpr uint32_t cb_in = tt::CBIndex::c_0;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    compute_kernel_hw_startup(cb_in, cb_out);
    copy_init(cb_in);
    // Two tiles through c_16 (two pages) the proper way; the writer pops both.
    for (int t = 0; t < 2; ++t) {
        cb_wait_front(cb_in, 1);
        tile_regs_acquire();
        copy_tile(cb_in, 0, 0);
        tile_regs_commit();
        cb_reserve_back(cb_out, 1);
        tile_regs_wait();
        pack_tile(0, cb_out);
        tile_regs_release();
        cb_push_back(cb_out, 1);
        cb_pop_front(cb_in, 1);
    }
    // Let the writer pop them (in the simulator's order of events).
    for (int i = 0; i < 2000; ++i) {
        tile_regs_acquire();
        tile_regs_commit();
        tile_regs_wait();
        tile_regs_release();
    }
    cb_wait_front(cb_in, 1);
    tile_regs_acquire();
    copy_tile(cb_in, 0, 0);
    tile_regs_commit();
    tile_regs_wait();
    pack_tile(0, cb_out);  // no cb_reserve_back: lands on the page the writer popped
    tile_regs_release();
}
