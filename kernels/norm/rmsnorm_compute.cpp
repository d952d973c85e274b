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
#include "rms_steps.h"

using rms_steps::kDstTiles;
using rms_steps::pack_batch;
using rms_steps::smaller;

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

        // 1. c_24 = the row's sum of squares; 2. c_25 = rs, the same value in every column of its row
        rms_steps::sum_of_squares(cb_x, group_tiles, cb_sq);
        rms_steps::inverse_rms(cb_sq, cb_ones, cb_rs, inv_width_bits, eps_bits);
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
