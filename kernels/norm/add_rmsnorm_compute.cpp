// Residual add + RMSNorm, compute. Per unit (a token tile row of W tiles):
//   s   = x + y, rounded to bf16 (the residual stream's format)      -> the writer, into x in place
//   out = s * rsqrt(mean(s^2) + eps) * (1 + w)                        -> the writer, the next block's input
// The norm is the norm of the rounded sum: what a residual add followed by an RMSNorm of the stored
// residual computes (the two final products in the other order), without s going to DRAM and back.
//
// 1. s on the FPU, a DST batch at a time (fp32 DST: the sum of two bf16 values is exact or rounded
//    once), packed twice: into c_4, which keeps the unit's W tiles for steps 2-4, and into c_17 for the
//    writer.
// 2. Sum of squares on the SFPU in fp32 DST, s copied exactly from its bf16 tiles.
// 3. rs = rsqrt(total / width + eps): a matmul of the sum tile with a ones tile gives every row's total
//    in each of its columns (fp32 accumulation), then SFPU scale, + eps, rsqrt.
// 4. On the FPU: s * (1 + w) with the weight's row 0 broadcast over the rows, then DST * rs reusing DST
//    as srcA (rs holds each row's value in every column). TF32 operands (s exact), HiFi4.
//
// Profiler zones add_norm.sum / .squares / .scale (no modeled cost) time steps 1, 2 and 4.
// Compile-time args: 0 DST batch (tiles; divides W).
// Common runtime args: 0 row tiles (W), 1 1/width as fp32 bits, 2 eps as fp32 bits.
// Runtime args: 0 number of units.
// CBs: c_0 x, c_1 y (bf16, streamed), c_2 weight rows (W, fp32, row 0 of each tile), c_3 ones (bf16);
//   c_4 s (W tiles, bf16); c_24 sum of squares (fp32), c_25 rs (fp32); c_16 out, c_17 s for the writer.
#include "api/compute/bcast.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/debug/kernel_profiler.hpp"
#include "rms_steps.h"

namespace {

using rms_steps::kDstTiles;
using rms_steps::pack_batch;
constexpr uint32_t cb_x = tt::CBIndex::c_0;
constexpr uint32_t cb_y = tt::CBIndex::c_1;
constexpr uint32_t cb_weight = tt::CBIndex::c_2;
constexpr uint32_t cb_ones = tt::CBIndex::c_3;
constexpr uint32_t cb_sum = tt::CBIndex::c_4;
constexpr uint32_t cb_out = tt::CBIndex::c_16;
constexpr uint32_t cb_sum_out = tt::CBIndex::c_17;
constexpr uint32_t cb_sq = tt::CBIndex::c_24;
constexpr uint32_t cb_rs = tt::CBIndex::c_25;

// Pack DST's first `count` tiles into cb, one page each (DST already committed and waited for).
ALWI void pack_into(uint32_t cb, uint32_t count) {
    pack_reconfig_data_format(cb);
    cb_reserve_back(cb, count);
    for (uint32_t i = 0; i < count; ++i) pack_tile(i, cb);
    cb_push_back(cb, count);
}

// 1. s = x + y, rounded to bf16 by the packer, kept (c_4) and sent to the writer (c_17)
template <uint32_t batch>
ALWI void add_rows(uint32_t row_tiles) {
    DeviceZoneScopedN("add_norm.sum");
    for (uint32_t j = 0; j < row_tiles; j += batch) {
        cb_wait_front(cb_x, batch);
        cb_wait_front(cb_y, batch);
        tile_regs_acquire();
        reconfig_data_format(cb_x, cb_y);
        add_init(cb_x, cb_y);
        for (uint32_t i = 0; i < batch; ++i) add_tiles(cb_x, cb_y, i, i, i);
        tile_regs_commit();
        tile_regs_wait();
        pack_into(cb_sum, batch);
        pack_into(cb_sum_out, batch);
        tile_regs_release();
        cb_pop_front(cb_x, batch);
        cb_pop_front(cb_y, batch);
    }
}

// 4. out = s * (1 + w) * rs
template <uint32_t batch>
ALWI void scale_rows(uint32_t row_tiles) {
    DeviceZoneScopedN("add_norm.scale");
    cb_wait_front(cb_rs, 1);
    for (uint32_t j = 0; j < row_tiles; j += batch) {
        tile_regs_acquire();
        reconfig_data_format(cb_sum, cb_weight);
        mul_bcast_rows_init(cb_sum, cb_weight);
        for (uint32_t i = 0; i < batch; ++i) mul_tiles_bcast_rows(cb_sum, cb_weight, j + i, j + i, i);
        reconfig_data_format_srcb(cb_rs);
        mul_reuse_dest_init<EltwiseBinaryReuseDestType::DEST_TO_SRCA>(cb_rs);
        for (uint32_t i = 0; i < batch; ++i) {
            mul_reuse_dest_tiles<EltwiseBinaryReuseDestType::DEST_TO_SRCA>(cb_rs, 0, i);
        }
        pack_batch(cb_out, batch);
    }
    cb_pop_front(cb_rs, 1);
}

}  // namespace

void kernel_main() {
    constexpr uint32_t batch = get_compile_time_arg_val(0);
    static_assert(batch >= 1 && batch <= kDstTiles, "a DST batch holds 1 to 4 fp32 tiles");
    const uint32_t row_tiles = get_common_arg_val<uint32_t>(0);
    const uint32_t inv_width_bits = get_common_arg_val<uint32_t>(1);
    const uint32_t eps_bits = get_common_arg_val<uint32_t>(2);
    const uint32_t num_units = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(cb_x, cb_y, cb_sum);
    cb_wait_front(cb_ones, 1);
    cb_wait_front(cb_weight, row_tiles);
    for (uint32_t unit = 0; unit < num_units; ++unit) {
        add_rows<batch>(row_tiles);
        cb_wait_front(cb_sum, row_tiles);
        {
            DeviceZoneScopedN("add_norm.squares");
            rms_steps::sum_of_squares(cb_sum, row_tiles, cb_sq);  // 2. c_24: the row's sum of s^2
        }
        rms_steps::inverse_rms(cb_sq, cb_ones, cb_rs, inv_width_bits, eps_bits);  // 3. c_25: rs
        scale_rows<batch>(row_tiles);
        cb_pop_front(cb_sum, row_tiles);
    }
}
