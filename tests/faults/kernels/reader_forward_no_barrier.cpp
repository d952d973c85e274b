// Fault: the reader sends a page on (back to its own DRAM page) before the read that fills it has
// completed: no noc_async_read_barrier between the read and the write.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    const uint32_t addr_a = get_arg_val<uint32_t>(0);
    constexpr auto args_a = TensorAccessorArgs<0>();
    const auto a = TensorAccessor(args_a, addr_a, get_tile_size(cb_a));
    cb_reserve_back(cb_a, 1);
    noc_async_read_page(0, a, get_write_ptr(cb_a));
    noc_async_write_page(0, a, get_write_ptr(cb_a));
    noc_async_write_barrier();
}
