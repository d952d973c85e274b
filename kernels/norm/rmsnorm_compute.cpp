// RMSNorm over groups of tiles, compute. Per unit (a token tile row of one group of G tiles):
//   zero-centred:  y = x * rsqrt(mean(x^2) + eps) * (1 + w)        (decoder norms, q/k norms)
//   gated:         y = w * (x * rsqrt(mean(x^2) + eps)) * silu(z)   (the GDN output norm)
// The weight rows hold 1 + w (zero-centred) or w (gated) in fp32, w in every row.
//
// 1. Sum of squares on the SFPU in fp32 DST, x copied exactly from its bf16 tiles, a few tiles per
//    DST acquire so each step's init is paid once per batch, not per tile.
// 2. rs = rsqrt(total / width + eps): one matmul of the sum tile with a ones tile gives every row's
//    total in each of its columns (fp32 accumulation), then SFPU scale, + eps, rsqrt.
// 3. On the FPU, a batch of tiles at a time: x * rs (rs holds each row's value in every column, so a
//    plain element-wise product scales each row), then DST * weight rows reusing DST as srcA. Operands
//    pass srcA/srcB as TF32 (rs, x_hat and the weight keep 10 mantissa bits; x is exact), HiFi4.
//    Gated: silu(z) on the SFPU into the other half of DST and an SFPU product.
//
// Compile-time args: 0 gated (0/1).
// Common runtime args: 0 group tiles (G), 1 1/(group width) as fp32 bits, 2 eps as fp32 bits.
// Runtime args: 0 number of units.
// CBs: c_0 x (G tiles a unit), c_1 z (gated), c_2 weight rows (G, fp32), c_3 ones (bf16); c_24 sum
//   of squares (fp32), c_25 rs (fp32); c_16 y (a batch at a time).
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/eltwise_unary/rsqrt.h"
#include "api/compute/matmul.h"
#include "api/compute/tile_move_copy.h"

namespace {

constexpr uint32_t kDstTiles = 4;  // one acquire with fp32 accumulation

ALWI uint32_t smaller(uint32_t a, uint32_t b) { return a < b ? a : b; }

// Commit DST and pack its first `count` tiles into cb, one page each.
ALWI void pack_batch(uint32_t cb, uint32_t count) {
    tile_regs_commit();
    tile_regs_wait();
    pack_reconfig_data_format(cb);
    cb_reserve_back(cb, count);
    for (uint32_t i = 0; i < count; ++i) pack_tile(i, cb);
    cb_push_back(cb, count);
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
    // Tiles of y per batch in step 3: the gated form keeps silu(z) in the other half of DST.
    constexpr uint32_t kBatch = gated ? kDstTiles / 2 : kDstTiles;
    const uint32_t group_tiles = get_common_arg_val<uint32_t>(0);
    const uint32_t inv_width_bits = get_common_arg_val<uint32_t>(1);
    const uint32_t eps_bits = get_common_arg_val<uint32_t>(2);
    const uint32_t num_units = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(cb_x, cb_ones, cb_y);
    cb_wait_front(cb_ones, 1);
    cb_wait_front(cb_weight, group_tiles);
    for (uint32_t unit = 0; unit < num_units; ++unit) {
        cb_wait_front(cb_x, group_tiles);

        // 1. DST[0] = sum over the group of x^2: the first batch fills DST[0..3], later ones DST[1..3]
        tile_regs_acquire();
        reconfig_data_format_srca(cb_x);
        for (uint32_t j = 0; j < group_tiles;) {
            const uint32_t first_dst = j == 0 ? 0 : 1;
            const uint32_t n = smaller(kDstTiles - first_dst, group_tiles - j);
            copy_init(cb_x);
            for (uint32_t i = 0; i < n; ++i) copy_tile(cb_x, j + i, first_dst + i);
            mul_binary_tile_init();
            for (uint32_t i = 0; i < n; ++i) mul_binary_tile(first_dst + i, first_dst + i, first_dst + i);
            if (n > 1 || first_dst == 1) {
                add_binary_tile_init();
                for (uint32_t i = first_dst == 0 ? 1 : 0; i < n; ++i) add_binary_tile(0, first_dst + i, 0);
            }
            j += n;
        }
        pack_batch(cb_sq, 1);

        // 2. rs = rsqrt(row total / width + eps), the same value in every column of its row
        cb_wait_front(cb_sq, 1);
        tile_regs_acquire();
        reconfig_data_format(cb_ones, cb_sq);
        matmul_init(cb_sq, cb_ones, 0);
        matmul_tiles(cb_sq, cb_ones, 0, 0, 0);
        binop_with_scalar_tile_init();
        mul_unary_tile(0, inv_width_bits);
        fill_tile_init();
        fill_tile_bitcast(1, eps_bits);
        add_binary_tile_init();
        add_binary_tile(0, 1, 0);
        rsqrt_tile_init();
        rsqrt_tile(0);
        pack_batch(cb_rs, 1);
        cb_pop_front(cb_sq, 1);
        cb_wait_front(cb_rs, 1);

        // 3. y = x * rs * weight (* silu(z))
        if constexpr (gated) cb_wait_front(cb_z, group_tiles);
        for (uint32_t j = 0; j < group_tiles; j += kBatch) {
            const uint32_t n = smaller(kBatch, group_tiles - j);
            tile_regs_acquire();
            reconfig_data_format(cb_x, cb_rs);
            mul_init(cb_x, cb_rs);
            for (uint32_t i = 0; i < n; ++i) mul_tiles(cb_x, cb_rs, j + i, 0, i);
            reconfig_data_format_srcb(cb_weight);
            mul_reuse_dest_init<EltwiseBinaryReuseDestType::DEST_TO_SRCA>(cb_weight);
            for (uint32_t i = 0; i < n; ++i) {
                mul_reuse_dest_tiles<EltwiseBinaryReuseDestType::DEST_TO_SRCA>(cb_weight, j + i, i);
            }
            if constexpr (gated) {
                reconfig_data_format_srca(cb_z);
                copy_init(cb_z);
                for (uint32_t i = 0; i < n; ++i) copy_tile(cb_z, j + i, kBatch + i);
                silu_tile_init();
                for (uint32_t i = 0; i < n; ++i) silu_tile(kBatch + i);
                mul_binary_tile_init();
                for (uint32_t i = 0; i < n; ++i) mul_binary_tile(i, kBatch + i, i);
            }
            pack_batch(cb_y, n);
        }
        cb_pop_front(cb_rs, 1);
        cb_pop_front(cb_x, group_tiles);
        if constexpr (gated) cb_pop_front(cb_z, group_tiles);
    }
}
