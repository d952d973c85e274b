// The circular-buffer patterns tt-metal's sdpa compute kernel uses, each legal on the device (the packer
// writes at the CB's write pointer plus the tile index; cb_reserve_back only waits for room), on c_1 as
// this kernel's own single-page intermediate. Per tile x of c_0, c_16 receives 2x + max(x, 0):
//   1. x into c_1 (reserve, pack, push);
//   2. in place over the page it waited for (c_1 full, so the write pointer is on that page):
//      2x packed without a reservation, then pop, reserve, push (recip_block_inplace's pattern);
//   3. into the page it has just popped, without a reservation (matmul_reduce's pattern): 2x again;
//   4. packer ReLU with L1 accumulation onto the page it pushed itself and has not waited for
//      (sub_exp's row sums, mul_block_bcast_cols<pack_accumulate>): 2x + max(x, 0);
//   5. pop of that page without a wait (its own push), reserve and push it again;
//   6. copy to c_16.
// Runtime args: 0 number of tiles. CBs: c_0 input, c_1 one bf16 page, c_16 output.
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/pack.h"

namespace {
constexpr uint32_t cb_in = tt::CBIndex::c_0;
constexpr uint32_t cb_im = tt::CBIndex::c_1;
constexpr uint32_t cb_out = tt::CBIndex::c_16;

void copy_to_dst(uint32_t cb) {
    copy_init(cb);
    copy_tile(cb, 0, 0);
}
}  // namespace

void kernel_main() {
    const uint32_t count = get_arg_val<uint32_t>(0);
    compute_kernel_hw_startup(cb_in, cb_im, cb_out);
    for (uint32_t t = 0; t < count; ++t) {
        cb_wait_front(cb_in, 1);
        // 1.
        tile_regs_acquire();
        copy_to_dst(cb_in);
        tile_regs_commit();
        cb_reserve_back(cb_im, 1);
        tile_regs_wait();
        pack_reconfig_data_format(cb_im);
        pack_tile(0, cb_im);
        tile_regs_release();
        cb_push_back(cb_im, 1);
        // 2.
        cb_wait_front(cb_im, 1);
        tile_regs_acquire();
        add_init(cb_im, cb_im);
        add_tiles(cb_im, cb_im, 0, 0, 0);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, cb_im);
        tile_regs_release();
        cb_pop_front(cb_im, 1);
        cb_reserve_back(cb_im, 1);
        cb_push_back(cb_im, 1);
        // 3.
        cb_wait_front(cb_im, 1);
        tile_regs_acquire();
        copy_to_dst(cb_im);
        tile_regs_commit();
        cb_pop_front(cb_im, 1);
        tile_regs_wait();
        pack_tile(0, cb_im);
        tile_regs_release();
        cb_push_back(cb_im, 1);
        // 4.
        tile_regs_acquire();
        copy_to_dst(cb_in);
        tile_regs_commit();
        tile_regs_wait();
        pack_relu_config(ReluConfig::zero());
        pack_reconfig_l1_acc(1);
        pack_tile(0, cb_im);
        pack_reconfig_l1_acc(0);
        pack_relu_config(ReluConfig::none());
        tile_regs_release();
        // 5.
        cb_pop_front(cb_im, 1);
        cb_reserve_back(cb_im, 1);
        cb_push_back(cb_im, 1);
        // 6.
        cb_wait_front(cb_im, 1);
        tile_regs_acquire();
        copy_to_dst(cb_im);
        tile_regs_commit();
        cb_reserve_back(cb_out, 1);
        tile_regs_wait();
        pack_reconfig_data_format(cb_out);
        pack_tile(0, cb_out);
        tile_regs_release();
        cb_push_back(cb_out, 1);
        cb_pop_front(cb_im, 1);
        cb_pop_front(cb_in, 1);
    }
}
