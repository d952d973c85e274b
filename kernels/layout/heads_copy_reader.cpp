// Head relayout, reader: copies whole heads of tiles between a token-major tensor [T, W] and a
// heads-major one [H, rows, D] (either way round). A unit is one (token tile row t, head h); its D/32
// tiles sit at source pages  t * src_row_stride + h * src_head_stride + src_col0 + j, j < head tiles.
// Attention reads Q, K, V and writes O heads-major while the projections and norms work token-major.
//
// Compile-time args: TensorAccessorArgs of the source at 0.
// Common runtime args: 0 source address, 1 heads, 2 head tiles, 3 source row stride (tiles),
//   4 source head stride (tiles), 5 source first column tile.
// Runtime args: 0 first unit, 1 number of units (units run t-major: u = t * heads + h).
// CBs: c_0 one head's tiles, double-buffered.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr auto src_args = TensorAccessorArgs<0>();
    const uint32_t src_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t heads = get_common_arg_val<uint32_t>(1);
    const uint32_t head_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t row_stride = get_common_arg_val<uint32_t>(3);
    const uint32_t head_stride = get_common_arg_val<uint32_t>(4);
    const uint32_t col0 = get_common_arg_val<uint32_t>(5);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    const uint32_t tile = get_tile_size(cb);
    const auto src = TensorAccessor(src_args, src_addr, tile);
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t first = (u / heads) * row_stride + (u % heads) * head_stride + col0;
        cb_reserve_back(cb, head_tiles);
        const uint32_t l1 = get_write_ptr(cb);
        for (uint32_t j = 0; j < head_tiles; ++j) {
            noc_async_read_page(first + j, src, l1 + j * tile);
        }
        noc_async_read_barrier();
        cb_push_back(cb, head_tiles);
    }
}
