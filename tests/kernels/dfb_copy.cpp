// Test compute kernel for the object API: copies each tile of c_0 to c_2, with the buffer protocol
// (wait/pop on the input, reserve/push on the output) through DataflowBuffer objects.
//
// Runtime args: 0 number of tiles.
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"
#include "api/dataflow/dataflow_buffer.h"

void kernel_main() {
    const uint32_t count = get_arg_val<uint32_t>(0);
    constexpr uint32_t cb_in = tt::CBIndex::c_0;
    constexpr uint32_t cb_out = tt::CBIndex::c_2;
    DataflowBuffer dfb_in(cb_in);
    DataflowBuffer dfb_out(cb_out);

    compute_kernel_hw_startup(cb_in, cb_out);
    copy_init(cb_in);
    for (uint32_t i = 0; i < count; ++i) {
        tile_regs_acquire();
        dfb_in.wait_front(1);
        dfb_out.reserve_back(1);
        copy_tile(cb_in, 0, 0);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, cb_out);
        dfb_in.pop_front(1);
        dfb_out.push_back(1);
        tile_regs_release();
    }
}
