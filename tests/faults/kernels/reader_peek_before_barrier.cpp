// Fault: the reader looks at a page's first word before the read barrier, then stores what it saw back
// into the page it pushes: it saw the simulator's poison (the data lands only at the barrier), so the
// first element of every tile comes out NaN.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    const uint32_t addr_a = get_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(2);
    const uint32_t count = get_arg_val<uint32_t>(3);
    constexpr auto args_a = TensorAccessorArgs<0>();
    const auto a = TensorAccessor(args_a, addr_a, get_tile_size(cb_a));
    for (uint32_t t = first; t < first + count; ++t) {
        cb_reserve_back(cb_a, 1);
        volatile tt_l1_ptr uint32_t* page = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(cb_a));
        noc_async_read_page(t, a, get_write_ptr(cb_a));
        const uint32_t seen = page[0];  // too early
        noc_async_read_barrier();
        page[0] = seen;
        cb_push_back(cb_a, 1);
    }
}
