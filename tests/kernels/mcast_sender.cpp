// Test multicast sender (object API): reads pages into its own DataflowBuffer and multicasts each one
// into the same buffer of every receiver core, handshaking through two Semaphore objects.
//
// Compile-time args: TensorAccessorArgs of the input at 0.
// Runtime args: 0 input address, 1 page count, 2 receivers, 3-6 the receivers' NoC rectangle
// (x start, y start, x end, y end), 7 "receivers ready" semaphore id, 8 "page valid" semaphore id.
#include "api/core_local_mem.h"
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/noc_semaphore.h"
#include "api/tensor/noc_traits.h"

void kernel_main() {
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);
    const uint32_t receivers = get_arg_val<uint32_t>(2);
    const uint32_t x0 = get_arg_val<uint32_t>(3), y0 = get_arg_val<uint32_t>(4);
    const uint32_t x1 = get_arg_val<uint32_t>(5), y1 = get_arg_val<uint32_t>(6);
    Semaphore<> ready(get_arg_val<uint32_t>(7));
    Semaphore<> valid(get_arg_val<uint32_t>(8));

    DataflowBuffer dfb(tt::CBIndex::c_0);
    const uint32_t page_bytes = dfb.get_entry_size();
    const auto src = TensorAccessor(TensorAccessorArgs<0>(), addr);
    Noc noc;
    valid.set(1);  // the value every receiver's "valid" semaphore gets for each page
    for (uint32_t p = 0; p < count; ++p) {
        dfb.reserve_back(1);
        noc.async_read(src, dfb, page_bytes, {.page_id = p}, {});
        noc.async_read_barrier();
        ready.wait(receivers);
        ready.set(0);
        CoreLocalMem<uint32_t> page(dfb.get_write_ptr());
        noc.async_write_multicast(page, dfb, page_bytes, receivers, {},
                                  {.noc_x_start = x0, .noc_y_start = y0, .noc_x_end = x1, .noc_y_end = y1});
        valid.set_multicast(noc, x0, y0, x1, y1, receivers);
        noc.async_write_barrier();
        dfb.push_back(1);
    }
}
