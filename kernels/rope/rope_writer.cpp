// Partial RoPE in place, writer: each unit's R rotated tiles back over the head's first R tiles of x.
// Every tile is read (by the reader, into this unit's CB) before its rotated value is written here.
//
// Compile-time args: TensorAccessorArgs of x at 0.
// Common runtime args: 0 x address, 1 heads, 2 head tiles, 3 rotary tiles R, 4 x row tiles.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_16 y.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_y = tt::CBIndex::c_16;
    constexpr auto x_args = TensorAccessorArgs<0>();
    const uint32_t x_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t heads = get_common_arg_val<uint32_t>(1);
    const uint32_t head_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t rotary_tiles = get_common_arg_val<uint32_t>(3);
    const uint32_t x_row_tiles = get_common_arg_val<uint32_t>(4);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    const auto x = TensorAccessor(x_args, x_addr, get_tile_size(cb_y));
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t first = (u / heads) * x_row_tiles + (u % heads) * head_tiles;
        // a unit's R tiles in one batch, one flush
        cb_wait_front(cb_y, rotary_tiles);
        for (uint32_t j = 0; j < rotary_tiles; ++j) {
            noc_async_write_page(first + j, x, get_read_ptr(cb_y) + j * get_tile_size(cb_y));
        }
        noc_async_writes_flushed();
        cb_pop_front(cb_y, rotary_tiles);
    }
    noc_async_write_barrier();
}
