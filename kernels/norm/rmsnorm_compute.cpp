// RMSNorm over groups of tiles, compute. Per unit (a token tile row of one group of G tiles):
//   zero-centred:  y = x * rsqrt(mean(x^2) + eps) * (1 + w)     (decoder norms, q/k norms)
//   gated:         y = w * (x * rsqrt(mean(x^2) + eps)) * silu(z)   (the GDN output norm)
// The squares are summed element-wise on the SFPU across the group's tiles (fp32 DST); one matmul of
// that sum with a ones tile gives every row's total in each of its columns (fp32 accumulation); the
// rest is fp32 SFPU arithmetic on DST, x read exactly from its bf16 tiles. (1 + w) is formed as
// xhat + xhat * w so the bf16 weight rows hold w itself, exactly.
//
// Compile-time args: 0 gated (0/1).
// Common runtime args: 0 group tiles (G), 1 1/(group width) as fp32 bits, 2 eps as fp32 bits.
// Runtime args: 0 number of units.
// CBs: c_0 x (G tiles a unit), c_1 z (gated), c_2 weight rows (G), c_3 ones; c_24 sum of squares
//   (fp32), c_25 rsqrt (fp32, unpacked straight to DST); c_16 y.
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/eltwise_unary/rsqrt.h"
#include "api/compute/matmul.h"
#include "api/compute/tile_move_copy.h"

namespace {

ALWI void load(uint32_t cb, uint32_t tile, uint32_t dst) {
    reconfig_data_format_srca(cb);
    copy_init(cb);
    copy_tile(cb, tile, dst);
}

ALWI void mul(uint32_t a, uint32_t b, uint32_t out) {
    mul_binary_tile_init();
    mul_binary_tile(a, b, out);
}

ALWI void add(uint32_t a, uint32_t b, uint32_t out) {
    add_binary_tile_init();
    add_binary_tile(a, b, out);
}

ALWI void pack_to(uint32_t cb) {
    tile_regs_commit();
    tile_regs_wait();
    pack_reconfig_data_format(cb);
    cb_reserve_back(cb, 1);
    pack_tile(0, cb);
    cb_push_back(cb, 1);
    tile_regs_release();
}

}  // namespace

void kernel_main() {
    constexpr uint32_t cb_x = tt::CBIndex::c_0;
    constexpr uint32_t cb_z = tt::CBIndex::c_1;
    constexpr uint32_t cb_weight = tt::CBIndex::c_2;
    constexpr uint32_t cb_ones = tt::CBIndex::c_3;
    constexpr uint32_t cb_y = tt::CBIndex::c_16;
    constexpr uint32_t cb_sq = tt::CBIndex::c_24;
    constexpr uint32_t cb_rs = tt::CBIndex::c_25;
    constexpr uint32_t gated = get_compile_time_arg_val(0);
    const uint32_t group_tiles = get_common_arg_val<uint32_t>(0);
    const uint32_t inv_width_bits = get_common_arg_val<uint32_t>(1);
    const uint32_t eps_bits = get_common_arg_val<uint32_t>(2);
    const uint32_t num_units = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(cb_x, cb_ones, cb_y);
    cb_wait_front(cb_ones, 1);
    cb_wait_front(cb_weight, group_tiles);
    for (uint32_t unit = 0; unit < num_units; ++unit) {
        cb_wait_front(cb_x, group_tiles);

        // sum over the group's tiles of x^2, element by element
        tile_regs_acquire();
        load(cb_x, 0, 0);
        mul(0, 0, 0);
        for (uint32_t j = 1; j < group_tiles; ++j) {
            load(cb_x, j, 1);
            mul(1, 1, 1);
            add(0, 1, 0);
        }
        pack_to(cb_sq);

        // rs = rsqrt(row total / width + eps), the same value in every column of its row
        cb_wait_front(cb_sq, 1);
        tile_regs_acquire();
        reconfig_data_format(cb_ones, cb_sq);
        matmul_init(cb_sq, cb_ones, 0);
        matmul_tiles(cb_sq, cb_ones, 0, 0, 0);
        binop_with_scalar_tile_init();
        mul_unary_tile(0, inv_width_bits);
        fill_tile_init();
        fill_tile_bitcast(1, eps_bits);
        add(0, 1, 0);
        rsqrt_tile_init();
        rsqrt_tile(0);
        pack_to(cb_rs);
        cb_pop_front(cb_sq, 1);
        cb_wait_front(cb_rs, 1);

        if constexpr (gated) cb_wait_front(cb_z, group_tiles);
        for (uint32_t j = 0; j < group_tiles; ++j) {
            tile_regs_acquire();
            load(cb_x, j, 0);
            load(cb_rs, 0, 1);
            mul(0, 1, 0);  // xhat
            load(cb_weight, j, 1);
            if constexpr (gated) {
                mul(0, 1, 0);
                load(cb_z, j, 2);
                silu_tile_init();
                silu_tile(2);
                mul(0, 2, 0);
            } else {
                mul(0, 1, 1);
                add(0, 1, 0);  // xhat + xhat * w
            }
            pack_to(cb_y);
        }
        cb_pop_front(cb_rs, 1);
        cb_pop_front(cb_x, group_tiles);
        if constexpr (gated) cb_pop_front(cb_z, group_tiles);
    }
}
