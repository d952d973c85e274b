// Partial RoPE in place, reader. A unit is one (token tile row, head); units run row-major, so the
// cos/sin tiles of a token row are read once, at its first unit on this core, and stay for its heads.
// Only a head's first R (rotary) tiles are read; the rest of the head is never touched.
//
// Compile-time args: TensorAccessorArgs of x at 0, then of the cos/sin tables (fp32 [T, 32 R]).
// Common runtime args: 0 x address, 1 cos address, 2 sin address, 3 heads, 4 head tiles, 5 rotary
//   tiles R, 6 x row tiles.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_0 x (R tiles a unit), c_1 cos (R), c_2 sin (R).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_x = tt::CBIndex::c_0;
    constexpr uint32_t cb_cos = tt::CBIndex::c_1;
    constexpr uint32_t cb_sin = tt::CBIndex::c_2;
    constexpr auto x_args = TensorAccessorArgs<0>();
    constexpr auto table_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();

    const uint32_t x_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t cos_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t sin_addr = get_common_arg_val<uint32_t>(2);
    const uint32_t heads = get_common_arg_val<uint32_t>(3);
    const uint32_t head_tiles = get_common_arg_val<uint32_t>(4);
    const uint32_t rotary_tiles = get_common_arg_val<uint32_t>(5);
    const uint32_t x_row_tiles = get_common_arg_val<uint32_t>(6);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    const uint32_t x_tile = get_tile_size(cb_x);
    const uint32_t t_tile = get_tile_size(cb_cos);
    const auto x = TensorAccessor(x_args, x_addr, x_tile);
    const auto cos_table = TensorAccessor(table_args, cos_addr, t_tile);
    const auto sin_table = TensorAccessor(table_args, sin_addr, t_tile);

    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t row = u / heads;
        const uint32_t head = u % heads;
        if (u == first_unit || head == 0) {
            cb_reserve_back(cb_cos, rotary_tiles);
            cb_reserve_back(cb_sin, rotary_tiles);
            for (uint32_t j = 0; j < rotary_tiles; ++j) {
                noc_async_read_page(row * rotary_tiles + j, cos_table, get_write_ptr(cb_cos) + j * t_tile);
                noc_async_read_page(row * rotary_tiles + j, sin_table, get_write_ptr(cb_sin) + j * t_tile);
            }
            noc_async_read_barrier();
            cb_push_back(cb_cos, rotary_tiles);
            cb_push_back(cb_sin, rotary_tiles);
        }
        const uint32_t x_first = row * x_row_tiles + head * head_tiles;
        cb_reserve_back(cb_x, rotary_tiles);
        for (uint32_t j = 0; j < rotary_tiles; ++j) {
            noc_async_read_page(x_first + j, x, get_write_ptr(cb_x) + j * x_tile);
        }
        noc_async_read_barrier();
        cb_push_back(cb_x, rotary_tiles);
    }
}
