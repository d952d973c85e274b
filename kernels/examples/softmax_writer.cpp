// Row softmax example, writer: each finished tile row to DRAM.
//
// Compile-time args: TensorAccessorArgs of out at 0.
// Runtime args: 0 out address, 1 first tile row, 2 number of tile rows, 3 tiles per row.
// CBs: c_16 softmax rows.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);
    const uint32_t ct = get_arg_val<uint32_t>(3);
    constexpr auto args = TensorAccessorArgs<0>();
    const uint32_t tile = get_tile_size(cb_out);
    const auto out = TensorAccessor(args, addr, tile);
    for (uint32_t r = first; r < first + count; ++r) {
        cb_wait_front(cb_out, ct);
        uint32_t l1 = get_read_ptr(cb_out);
        for (uint32_t c = 0; c < ct; ++c) noc_async_write_page(r * ct + c, out, l1 + c * tile);
        noc_async_write_barrier();
        cb_pop_front(cb_out, ct);
    }
}
