// RMSNorm over groups of tiles, writer: each unit's group tiles of y into [tokens, groups * group width]
// (the groups back to back, whatever stride they had in x).
//
// Compile-time args: TensorAccessorArgs of y at 0.
// Common runtime args: 0 y address, 1 groups per row, 2 group tiles.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_16 y.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_y = tt::CBIndex::c_16;
    constexpr auto y_args = TensorAccessorArgs<0>();
    const uint32_t y_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t groups = get_common_arg_val<uint32_t>(1);
    const uint32_t group_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    const uint32_t y_tile = get_tile_size(cb_y);
    const auto y = TensorAccessor(y_args, y_addr, y_tile);
    const uint32_t row_tiles = groups * group_tiles;
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t first = (u / groups) * row_tiles + (u % groups) * group_tiles;
        for (uint32_t j = 0; j < group_tiles; ++j) {
            cb_wait_front(cb_y, 1);
            noc_async_write_page(first + j, y, get_read_ptr(cb_y));
            noc_async_writes_flushed();
            cb_pop_front(cb_y, 1);
        }
    }
    noc_async_write_barrier();
}
