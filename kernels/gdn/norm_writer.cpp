// GDN gated RMSNorm, writer: y tiles of each (token tile, value head) unit into the [T, HV * V] output.
//
// Compile-time args: TensorAccessorArgs of y at 0.
// Common runtime args: 0 y address, 1 value heads (HV), 2 value tiles (VT), 3 y width in tiles.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_16 y.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_y = tt::CBIndex::c_16;
    const uint32_t y_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t value_heads = get_common_arg_val<uint32_t>(1);
    const uint32_t value_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t y_row_tiles = get_common_arg_val<uint32_t>(3);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    constexpr auto y_args = TensorAccessorArgs<0>();
    const auto y = TensorAccessor(y_args, y_addr, get_tile_size(cb_y));
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t tt = u / value_heads;
        const uint32_t hv = u % value_heads;
        for (uint32_t j = 0; j < value_tiles; ++j) {
            cb_wait_front(cb_y, 1);
            noc_async_write_page(tt * y_row_tiles + hv * value_tiles + j, y, get_read_ptr(cb_y));
            noc_async_writes_flushed();
            cb_pop_front(cb_y, 1);
        }
    }
    noc_async_write_barrier();
}
