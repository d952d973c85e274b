// Fault: a NoC read into the firmware's region of L1, between the semaphores and the circular buffers.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    const uint32_t l1_bottom = get_semaphore(0);  // semaphore 0 sits at L1 offset 0
    cb_reserve_back(cb_a, 1);
    noc_async_read(get_noc_addr(my_x[noc_index], my_y[noc_index], get_write_ptr(cb_a)), l1_bottom + 4096, 64);
    noc_async_read_barrier();
    cb_push_back(cb_a, 1);
}
