// Fault: packs into c_0, whose pages the reader has pushed and this kernel has not read (it never
// waited on c_0): on the device the pack would overwrite input no one has consumed yet.
// Runtime args: 0 number of tiles (as tests/kernels/compute_op.cpp).
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    constexpr uint32_t cb_in = tt::CBIndex::c_0;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    compute_kernel_hw_startup(cb_in, cb_out);
    // Let the reader fill c_0 (both pages pushed), as compute_unwaited.cpp does.
    for (int i = 0; i < 200; ++i) {
        tile_regs_acquire();
        tile_regs_commit();
        tile_regs_wait();
        tile_regs_release();
    }
    tile_regs_acquire();
    tile_regs_commit();
    tile_regs_wait();
    pack_reconfig_data_format(cb_in);
    pack_tile(0, cb_in);
    tile_regs_release();
}
