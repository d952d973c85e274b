// Test multicast receiver (object API): for each page, reserves room in its DataflowBuffer, tells the
// sender it is ready (a remote Semaphore increment), waits for the page to be valid, and pushes it.
//
// Runtime args: 0 page count, 1-2 the sender's NoC x and y, 3 "receivers ready" semaphore id,
// 4 "page valid" semaphore id.
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/noc_semaphore.h"

void kernel_main() {
    const uint32_t count = get_arg_val<uint32_t>(0);
    const uint32_t sender_x = get_arg_val<uint32_t>(1), sender_y = get_arg_val<uint32_t>(2);
    Semaphore<> ready(get_arg_val<uint32_t>(3));
    Semaphore<> valid(get_arg_val<uint32_t>(4));

    DataflowBuffer dfb(tt::CBIndex::c_0);
    Noc noc;
    for (uint32_t p = 0; p < count; ++p) {
        dfb.reserve_back(1);
        valid.set(0);
        ready.up(noc, sender_x, sender_y, 1);
        valid.wait(1);
        dfb.push_back(1);
    }
}
