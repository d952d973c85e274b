// GDN gated RMSNorm: y = w * (o * rsqrt(mean(o^2) + eps)) * silu(z) over each value head's V dims.
// The squares are summed element-wise on the SFPU across the head's tiles, then (sum) @ ones on the
// FPU gives each row's total in every column (fp32 accumulation), so the scaling by rsqrt and the
// products with w and silu(z) are fp32 SFPU products.
//
// Compile-time args: none.
// Common runtime args: 0 value tiles (VT), 1 1/V (fp32 bits), 2 eps (fp32 bits).
// Runtime args: 0 number of units.
// CBs: c_0 o, c_1 z, c_2 weight rows, c_3 ones; c_24 sum of squares, c_25 rs (fp32); output c_16 y.
#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/eltwise_unary/rsqrt.h"
#include "gdn_compute.h"

void kernel_main() {
    constexpr uint32_t cb_o = tt::CBIndex::c_0;
    constexpr uint32_t cb_z = tt::CBIndex::c_1;
    constexpr uint32_t cb_weight = tt::CBIndex::c_2;
    constexpr uint32_t cb_ones = tt::CBIndex::c_3;
    constexpr uint32_t cb_y = tt::CBIndex::c_16;
    constexpr uint32_t cb_sq = tt::CBIndex::c_24;
    constexpr uint32_t cb_rs = tt::CBIndex::c_25;
    const uint32_t value_tiles = get_common_arg_val<uint32_t>(0);
    const uint32_t inv_dim_bits = get_common_arg_val<uint32_t>(1);
    const uint32_t eps_bits = get_common_arg_val<uint32_t>(2);
    const uint32_t num_units = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(cb_o, cb_z, cb_y);
    cb_wait_front(cb_ones, 1);
    cb_wait_front(cb_weight, value_tiles);
    for (uint32_t unit = 0; unit < num_units; ++unit) {
        cb_wait_front(cb_o, value_tiles);
        cb_wait_front(cb_z, value_tiles);

        tile_regs_acquire();
        gdn::copy_in(cb_o, 0, 0);
        gdn::mul_dst(0, 0, 0);
        for (uint32_t j = 1; j < value_tiles; ++j) {
            gdn::copy_in(cb_o, j, 1);
            gdn::mul_dst(1, 1, 1);
            gdn::add_dst(0, 1, 0);
        }
        gdn::pack_dst_push(cb_sq);
        cb_wait_front(cb_sq, 1);

        tile_regs_acquire();
        gdn::matmul_start(cb_sq, cb_ones);
        matmul_tiles(cb_sq, cb_ones, 0, 0, 0);
        binop_with_scalar_tile_init();
        mul_unary_tile(0, inv_dim_bits);
        fill_tile_init();
        fill_tile_bitcast(1, eps_bits);
        gdn::add_dst(0, 1, 0);
        rsqrt_tile_init();
        rsqrt_tile(0);
        gdn::pack_dst_push(cb_rs);
        cb_pop_front(cb_sq, 1);
        cb_wait_front(cb_rs, 1);

        for (uint32_t j = 0; j < value_tiles; ++j) {
            tile_regs_acquire();
            gdn::copy_in(cb_o, j, 0);
            gdn::copy_in(cb_rs, 0, 1);
            gdn::mul_dst(0, 1, 0);
            gdn::copy_in(cb_weight, j, 1);
            gdn::mul_dst(0, 1, 0);
            gdn::copy_in(cb_z, j, 2);
            silu_tile_init();
            silu_tile(2);
            gdn::mul_dst(0, 2, 0);
            gdn::pack_dst_push(cb_y);
        }
        cb_pop_front(cb_rs, 1);
        cb_pop_front(cb_o, value_tiles);
        cb_pop_front(cb_z, value_tiles);
    }
}
