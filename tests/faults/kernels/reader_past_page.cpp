// Fault: a NoC read three pages long into a two-page CB: it runs past the reserved page into the next CB.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    const uint32_t page = get_tile_size(cb_a);
    cb_reserve_back(cb_a, 1);
    // The source is this core's own L1 (the output CB), so only the destination is wrong.
    noc_async_read(get_noc_addr(my_x[noc_index], my_y[noc_index], get_write_ptr(tt::CBIndex::c_16)), get_write_ptr(cb_a),
                   3 * page);
    noc_async_read_barrier();
    cb_push_back(cb_a, 1);
}
