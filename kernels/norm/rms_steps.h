// The steps our RMSNorm compute kernels share (rmsnorm_compute.cpp, add_rmsnorm_compute.cpp): the row's sum
// of squares and its inverse RMS, each one DST acquire, fp32 DST (4 tiles an acquire).
#pragma once

#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/eltwise_unary/rsqrt.h"
#include "api/compute/matmul.h"
#include "api/compute/tile_move_copy.h"

namespace rms_steps {

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

// cb_sq gets one tile: DST[0] = the sum over `tiles` tiles of cb_in (waited for, not popped) of x^2, on the
// SFPU with x copied exactly from its bf16 tiles, a few tiles an init: the first batch fills DST[0..3],
// later ones DST[1..3].
ALWI void sum_of_squares(uint32_t cb_in, uint32_t tiles, uint32_t cb_sq) {
    tile_regs_acquire();
    reconfig_data_format_srca(cb_in);
    for (uint32_t j = 0; j < tiles;) {
        const uint32_t first_dst = j == 0 ? 0 : 1;
        const uint32_t n = smaller(kDstTiles - first_dst, tiles - j);
        copy_init(cb_in);
        for (uint32_t i = 0; i < n; ++i) copy_tile(cb_in, j + i, first_dst + i);
        mul_binary_tile_init();
        for (uint32_t i = 0; i < n; ++i) mul_binary_tile(first_dst + i, first_dst + i, first_dst + i);
        if (n > 1 || first_dst == 1) {
            add_binary_tile_init();
            for (uint32_t i = first_dst == 0 ? 1 : 0; i < n; ++i) add_binary_tile(0, first_dst + i, 0);
        }
        j += n;
    }
    pack_batch(cb_sq, 1);
}

// cb_rs gets rsqrt(row total / width + eps), the same value in every column of its row: the sum tile (popped)
// times a ones tile gives every row's total in each of its columns (fp32 accumulation), then SFPU scale,
// + eps, rsqrt.
ALWI void inverse_rms(uint32_t cb_sq, uint32_t cb_ones, uint32_t cb_rs, uint32_t inv_width_bits,
                      uint32_t eps_bits) {
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
}

}  // namespace rms_steps
