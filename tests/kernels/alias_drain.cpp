// Test kernel for CB aliases: waits for `count` pages pushed on one CB index, then hands the same bytes
// on through a second index laid over the same allocation (reserve and push on it without writing: its
// write pointer already points at them), and drains them to DRAM from that second index's read pointer.
// What lands in DRAM is the first index's data only if both indices address one allocation.
//
// Compile-time args: 0 the index the pages were pushed on, 1 the aliasing index, then TensorAccessorArgs
// of the output at 2. Runtime args: 0 output address, 1 page count.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_pushed = get_compile_time_arg_val(0);
    constexpr uint32_t cb_alias = get_compile_time_arg_val(1);
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);
    const uint32_t page_bytes = get_tile_size(cb_pushed);
    const auto out = TensorAccessor(TensorAccessorArgs<2>(), addr, page_bytes);

    cb_wait_front(cb_pushed, count);
    cb_reserve_back(cb_alias, count);
    cb_push_back(cb_alias, count);
    cb_wait_front(cb_alias, count);
    const uint32_t base = get_read_ptr(cb_alias);
    for (uint32_t p = 0; p < count; ++p) {
        noc_async_write_page(p, out, base + p * page_bytes);
    }
    noc_async_write_barrier();
    cb_pop_front(cb_alias, count);
    cb_pop_front(cb_pushed, count);
}
