// Test compute kernel: runs an SFPU op chain, given as the unary factory's defines (SFPU_OP_CHAIN_0
// and SFPU_OP_<FAMILY>_INCLUDE), on each tile, with input A in DST 0 and, when TWO_INPUTS is defined,
// input B in DST 1; packs DST 0. The defines' statements run in order after the copies.
// Runtime args: 0 number of tiles. CBs: c_0 input A, c_1 input B, c_16 output.
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_unary/sfpu_split_includes.h"
// SFPU headers that have no SFPU_OP_*_INCLUDE family
#include "api/compute/gcd.h"
#include "api/compute/nextafter.h"
#include "api/compute/xlogy.h"
#include "api/compute/sfpu_binary_bcast.h"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t count = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(cb_a, cb_b, cb_out);
    for (uint32_t t = 0; t < count; ++t) {
        cb_wait_front(cb_a, 1);
#ifdef TWO_INPUTS
        cb_wait_front(cb_b, 1);
#endif
        cb_reserve_back(cb_out, 1);
        tile_regs_acquire();
        copy_init(cb_a);
        copy_tile(cb_a, 0, 0);
#ifdef TWO_INPUTS
        copy_init(cb_b);
        copy_tile(cb_b, 0, 1);
#endif
        SFPU_OP_CHAIN_0
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, cb_out);
        tile_regs_release();
        cb_push_back(cb_out, 1);
        cb_pop_front(cb_a, 1);
#ifdef TWO_INPUTS
        cb_pop_front(cb_b, 1);
#endif
    }
}
