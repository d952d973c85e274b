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

        // Sum of squares in the order ((o0^2 + o1^2) + o2^2) + ..., the tiles loaded side by side so
        // that each set-up (copy, square, add) serves a group: DST[0] holds the running sum, the first
        // group fills all of DST, later ones the rest.
        tile_regs_acquire();
        reconfig_data_format_srca(cb_o);
        copy_init(cb_o);
        for (uint32_t j0 = 0; j0 < value_tiles;) {
            const uint32_t slot0 = j0 == 0 ? 0 : 1;
            const uint32_t room = gdn::kDstTiles - slot0;
            const uint32_t n = value_tiles - j0 < room ? value_tiles - j0 : room;
            for (uint32_t i = 0; i < n; ++i) copy_tile(cb_o, j0 + i, slot0 + i);
            mul_binary_tile_init();
            for (uint32_t i = 0; i < n; ++i) mul_binary_tile(slot0 + i, slot0 + i, slot0 + i);
            add_binary_tile_init();
            for (uint32_t i = 1 - slot0; i < n; ++i) add_binary_tile(0, slot0 + i, 0);
            j0 += n;
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

        // y = ((o * rs) * w) * silu(z) per tile: silu(z) first, so that one multiply set-up serves the
        // three products; the bf16 tiles (z, o) and the fp32 ones (rs, w) each share a copy set-up.
        for (uint32_t j = 0; j < value_tiles; ++j) {
            tile_regs_acquire();
            reconfig_data_format_srca(cb_z);
            copy_init(cb_z);
            copy_tile(cb_z, j, 3);
            copy_tile(cb_o, j, 0);
            silu_tile_init();
            silu_tile(3);
            reconfig_data_format_srca(cb_rs);
            copy_init(cb_rs);
            copy_tile(cb_rs, 0, 1);
            copy_tile(cb_weight, j, 2);
            mul_binary_tile_init();
            mul_binary_tile(0, 1, 0);
            mul_binary_tile(0, 2, 0);
            mul_binary_tile(0, 3, 0);
            gdn::pack_dst_push(cb_y);
        }
        cb_pop_front(cb_rs, 1);
        cb_pop_front(cb_o, value_tiles);
        cb_pop_front(cb_z, value_tiles);
    }
}
