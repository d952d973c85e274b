// Copies c_0 to c_16 two tiles at a time and pushes each pair with one cb_push_back, so a consumer's
// wait for the first tile of a pair also covers the second (the device's received count moves by two).
// Runtime args: 0 number of tiles (even).
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    constexpr uint32_t cb_in = tt::CBIndex::c_0;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t count = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(cb_in, cb_out);
    copy_tile_init(cb_in);
    for (uint32_t t = 0; t < count; t += 2) {
        cb_wait_front(cb_in, 2);
        cb_reserve_back(cb_out, 2);
        tile_regs_acquire();
        copy_tile(cb_in, 0, 0);
        copy_tile(cb_in, 1, 1);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, cb_out);
        pack_tile(1, cb_out);
        tile_regs_release();
        cb_push_back(cb_out, 2);
        cb_pop_front(cb_in, 2);
    }
}
