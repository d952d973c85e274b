// Test compute kernel that breaks one rule of the DST protocol, chosen by a define, so the tests can
// check the simulator stops it with a clear message.
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/sfpu_binary_bcast.h"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    compute_kernel_hw_startup(cb_a, cb_out);
    cb_wait_front(cb_a, 1);
    cb_reserve_back(cb_out, 1);
#if defined(MISUSE_NO_ACQUIRE)
    copy_init(cb_a);
    copy_tile(cb_a, 0, 0);
#elif defined(MISUSE_PACK_WITHOUT_WAIT)
    tile_regs_acquire();
    copy_init(cb_a);
    copy_tile(cb_a, 0, 0);
    tile_regs_commit();
    pack_tile(0, cb_out);
#elif defined(MISUSE_DST_INDEX)
    tile_regs_acquire();
    copy_init(cb_a);
    copy_tile(cb_a, 0, 4);  // fp32 DST: a half holds 4 tiles
#elif defined(MISUSE_WRONG_INIT)
    tile_regs_acquire();
    copy_init(cb_a);
    add_tiles(cb_a, cb_a, 0, 0, 0);
#elif defined(MISUSE_PACK_EXP_WHILE_MATH_HOLDS_DST)
    tile_regs_acquire();
    copy_init(cb_a);
    copy_tile(cb_a, 0, 0);
    exp_packthread_tile_init();
    exp_packthread_tile(0);  // the pack thread does not hold DST before tile_regs_wait
#elif defined(MISUSE_BCAST_WITHOUT_INIT)
    tile_regs_acquire();
    copy_init(cb_a);
    copy_tile(cb_a, 0, 0);
    copy_tile(cb_a, 0, 1);
    sfpu_mul_bcast_col(0, 1);  // no sfpu_bcast_col_init
#elif defined(MISUSE_DOUBLE_ACQUIRE)
    tile_regs_acquire();
    tile_regs_acquire();
#elif defined(MISUSE_NO_RELEASE)
    tile_regs_acquire();
    copy_init(cb_a);
    copy_tile(cb_a, 0, 0);
    tile_regs_commit();
    tile_regs_wait();
    pack_tile(0, cb_out);
#endif
}
