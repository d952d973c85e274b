// Not a fault: tests/kernels/writer_tiles.cpp that first lets the reader go (poll_reader.cpp) with a
// NoC increment of semaphore 0 on its own core.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    noc_semaphore_inc(get_noc_addr(my_x[noc_index], my_y[noc_index], get_semaphore(0)), 1);
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);
    constexpr auto args = TensorAccessorArgs<0>();
    const auto out = TensorAccessor(args, addr, get_tile_size(cb_out));
    for (uint32_t t = first; t < first + count; ++t) {
        cb_wait_front(cb_out, 1);
        noc_async_write_page(t, out, get_read_ptr(cb_out));
        noc_async_write_barrier();
        cb_pop_front(cb_out, 1);
    }
}
