// Fault: the writer pops each page while its NoC write may still be reading it (no write barrier).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);
    constexpr auto args = TensorAccessorArgs<0>();
    const auto out = TensorAccessor(args, addr, get_tile_size(cb_out));
    for (uint32_t t = first; t < first + count; ++t) {
        cb_wait_front(cb_out, 1);
        noc_async_write_page(t, out, get_read_ptr(cb_out));
        cb_pop_front(cb_out, 1);  // the write may still be reading the page
    }
    noc_async_write_barrier();
}
