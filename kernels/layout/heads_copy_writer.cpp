// Head relayout, writer: each unit's tiles (heads_copy_reader.cpp) to destination pages
// t * dst_row_stride + h * dst_head_stride + dst_col0 + j.
//
// Compile-time args: TensorAccessorArgs of the destination at 0.
// Common runtime args: 0 destination address, 1 heads, 2 head tiles, 3 destination row stride (tiles),
//   4 destination head stride (tiles), 5 destination first column tile.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_0 (the reader's).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr auto dst_args = TensorAccessorArgs<0>();
    const uint32_t dst_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t heads = get_common_arg_val<uint32_t>(1);
    const uint32_t head_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t row_stride = get_common_arg_val<uint32_t>(3);
    const uint32_t head_stride = get_common_arg_val<uint32_t>(4);
    const uint32_t col0 = get_common_arg_val<uint32_t>(5);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    const uint32_t tile = get_tile_size(cb);
    const auto dst = TensorAccessor(dst_args, dst_addr, tile);
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t first = (u / heads) * row_stride + (u % heads) * head_stride + col0;
        cb_wait_front(cb, head_tiles);
        const uint32_t l1 = get_read_ptr(cb);
        for (uint32_t j = 0; j < head_tiles; ++j) {
            noc_async_write_page(first + j, dst, l1 + j * tile);
        }
        noc_async_writes_flushed();
        cb_pop_front(cb, head_tiles);
    }
    noc_async_write_barrier();
}
