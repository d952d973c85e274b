// Row softmax example, compute: for each tile row, m = max over the row; e = exp(x - m);
// s = sum over the row of e; out = e * (1 / s).
//
// Compile-time args: 0 tiles per row.
// Runtime args: 0 number of tile rows.
// CBs: c_0 x, c_1 scaler (ones), c_24 row max (fp32), c_25 exp values (fp32), c_26 1/sum (fp32), c_16 out.
#include <limits>

#include "api/compute/bcast.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/eltwise_unary/recip.h"
#include "api/compute/reduce.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    constexpr uint32_t cb_x = tt::CBIndex::c_0;
    constexpr uint32_t cb_scaler = tt::CBIndex::c_1;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    constexpr uint32_t cb_max = tt::CBIndex::c_24;
    constexpr uint32_t cb_exp = tt::CBIndex::c_25;
    constexpr uint32_t cb_recip = tt::CBIndex::c_26;
    constexpr uint32_t ct = get_compile_time_arg_val(0);
    constexpr uint32_t dst0 = 0;
    const uint32_t rows = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(cb_x, cb_scaler, cb_out);
    cb_wait_front(cb_scaler, 1);
    for (uint32_t r = 0; r < rows; ++r) {
        cb_wait_front(cb_x, ct);

        // Row max: DST starts at -inf so all-negative rows reduce correctly.
        tile_regs_acquire();
        fill_tile_init();
        fill_tile(dst0, -std::numeric_limits<float>::infinity());
        reduce_init<PoolType::MAX, ReduceDim::REDUCE_ROW>(cb_x, cb_scaler, cb_max);
        for (uint32_t c = 0; c < ct; ++c) reduce_tile<PoolType::MAX, ReduceDim::REDUCE_ROW>(cb_x, cb_scaler, c, 0, dst0);
        reduce_uninit();
        tile_regs_commit();
        cb_reserve_back(cb_max, 1);
        tile_regs_wait();
        pack_reconfig_data_format(cb_max);
        pack_tile(dst0, cb_max);
        tile_regs_release();
        cb_push_back(cb_max, 1);

        // e = exp(x - m), tile by tile.
        cb_wait_front(cb_max, 1);
        cb_reserve_back(cb_exp, ct);
        for (uint32_t c = 0; c < ct; ++c) {
            tile_regs_acquire();
            sub_bcast_cols_init(cb_x, cb_max);
            sub_tiles_bcast_cols(cb_x, cb_max, c, 0, dst0);
            exp_tile_init();
            exp_tile(dst0);
            tile_regs_commit();
            tile_regs_wait();
            pack_reconfig_data_format(cb_exp);
            pack_tile(dst0, cb_exp);
            tile_regs_release();
        }
        cb_push_back(cb_exp, ct);
        cb_pop_front(cb_max, 1);
        cb_pop_front(cb_x, ct);

        // 1 / sum(e) over the row.
        cb_wait_front(cb_exp, ct);
        tile_regs_acquire();
        reduce_init<PoolType::SUM, ReduceDim::REDUCE_ROW>(cb_exp, cb_scaler, cb_recip);
        for (uint32_t c = 0; c < ct; ++c) reduce_tile<PoolType::SUM, ReduceDim::REDUCE_ROW>(cb_exp, cb_scaler, c, 0, dst0);
        reduce_uninit();
        recip_tile_init();
        recip_tile(dst0);
        tile_regs_commit();
        cb_reserve_back(cb_recip, 1);
        tile_regs_wait();
        pack_reconfig_data_format(cb_recip);
        pack_tile(dst0, cb_recip);
        tile_regs_release();
        cb_push_back(cb_recip, 1);

        // out = e * (1 / s), broadcast along the row.
        cb_wait_front(cb_recip, 1);
        cb_reserve_back(cb_out, ct);
        for (uint32_t c = 0; c < ct; ++c) {
            tile_regs_acquire();
            mul_bcast_cols_init(cb_exp, cb_recip);
            mul_tiles_bcast_cols(cb_exp, cb_recip, c, 0, dst0);
            tile_regs_commit();
            tile_regs_wait();
            pack_reconfig_data_format(cb_out);
            pack_tile(dst0, cb_out);
            tile_regs_release();
        }
        cb_push_back(cb_out, ct);
        cb_pop_front(cb_recip, 1);
        cb_pop_front(cb_exp, ct);
    }
}
