// GDN gates, reader: tiles of a and b ([T, HV] bf16, 32 value heads per tile column) with the
// row-broadcast parameter tiles of their head columns (dt_bias and A_log, fp32 [32, HV], every row the
// same). a and b may be column ranges of wider tensors (e.g. both beside z in one projection's output):
// head column c of token tile row r is page r * row_tiles + col0 + c of its tensor.
//
// Compile-time args: TensorAccessorArgs of a/b at 0, then of the parameter rows.
// Common runtime args: 0 a address, 1 b address, 2 dt_bias rows address, 3 A_log rows address,
//   4 head column tiles, 5 a row tiles, 6 a first column tile, 7 b row tiles, 8 b first column tile.
// Runtime args: 0 first tile, 1 number of tiles (of the [T, HV] head columns, row-major).
// CBs: c_0 a, c_1 b, c_2 dt_bias row tile, c_3 A_log row tile.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr uint32_t cb_dt_bias = tt::CBIndex::c_2;
    constexpr uint32_t cb_a_log = tt::CBIndex::c_3;
    const uint32_t a_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t dt_bias_addr = get_common_arg_val<uint32_t>(2);
    const uint32_t a_log_addr = get_common_arg_val<uint32_t>(3);
    const uint32_t head_tiles = get_common_arg_val<uint32_t>(4);
    const uint32_t a_row_tiles = get_common_arg_val<uint32_t>(5);
    const uint32_t a_col0 = get_common_arg_val<uint32_t>(6);
    const uint32_t b_row_tiles = get_common_arg_val<uint32_t>(7);
    const uint32_t b_col0 = get_common_arg_val<uint32_t>(8);
    const uint32_t first = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);

    constexpr auto ab_args = TensorAccessorArgs<0>();
    constexpr auto param_args = TensorAccessorArgs<ab_args.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(ab_args, a_addr, get_tile_size(cb_a));
    const auto b = TensorAccessor(ab_args, b_addr, get_tile_size(cb_b));
    const auto dt_bias = TensorAccessor(param_args, dt_bias_addr, get_tile_size(cb_dt_bias));
    const auto a_log = TensorAccessor(param_args, a_log_addr, get_tile_size(cb_a_log));

    for (uint32_t t = first; t < first + count; ++t) {
        const uint32_t row = t / head_tiles;
        const uint32_t col = t % head_tiles;
        cb_reserve_back(cb_a, 1);
        cb_reserve_back(cb_b, 1);
        cb_reserve_back(cb_dt_bias, 1);
        cb_reserve_back(cb_a_log, 1);
        noc_async_read_page(row * a_row_tiles + a_col0 + col, a, get_write_ptr(cb_a));
        noc_async_read_page(row * b_row_tiles + b_col0 + col, b, get_write_ptr(cb_b));
        noc_async_read_page(col, dt_bias, get_write_ptr(cb_dt_bias));
        noc_async_read_page(col, a_log, get_write_ptr(cb_a_log));
        noc_async_read_barrier();
        cb_push_back(cb_a, 1);
        cb_push_back(cb_b, 1);
        cb_push_back(cb_dt_bias, 1);
        cb_push_back(cb_a_log, 1);
    }
}
