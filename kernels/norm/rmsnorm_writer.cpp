// RMSNorm over groups of tiles, writer: each unit's group tiles of y into [tokens, groups * group width]
// (the groups back to back, whatever stride they had in x).
//
// Tiles go out a batch at a time (the compute kernel's batch of up to 4): one flush per batch, so the
// writes of a batch overlap instead of each waiting for the last to leave L1.
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
    constexpr uint32_t kBatch = 4;
    const uint32_t row_tiles = groups * group_tiles;
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t first = (u / groups) * row_tiles + (u % groups) * group_tiles;
        for (uint32_t j = 0; j < group_tiles; j += kBatch) {
            const uint32_t n = group_tiles - j < kBatch ? group_tiles - j : kBatch;
            cb_wait_front(cb_y, n);
            for (uint32_t i = 0; i < n; ++i) {
                noc_async_write_page(first + j + i, y, get_read_ptr(cb_y) + i * y_tile);
            }
            noc_async_writes_flushed();
            cb_pop_front(cb_y, n);
        }
    }
    noc_async_write_barrier();
}
