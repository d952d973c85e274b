// Test kernel: checks what get_local_cb_interface and DataflowBuffer report about buffer c_0 against
// the expected values given as runtime args (a mismatch trips an ASSERT), then misbehaves on request.
//
// Runtime args: 0 page size, 1 page count, 2 misuse (0 none, 1 assign fifo_wr_ptr, 2 a false ASSERT).
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"

void kernel_main() {
    const uint32_t page_size = get_arg_val<uint32_t>(0);
    const uint32_t pages = get_arg_val<uint32_t>(1);
    const uint32_t misuse = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb = tt::CBIndex::c_0;
    auto& iface = get_local_cb_interface(cb);
    DataflowBuffer dfb(cb);

    ASSERT(iface.fifo_page_size == page_size);
    ASSERT(iface.fifo_num_pages == pages);
    ASSERT(iface.fifo_size == page_size * pages);
    ASSERT(iface.fifo_limit - iface.fifo_size == iface.fifo_rd_ptr);
    ASSERT(dfb.get_total_size_bytes() == page_size * pages);

    const uint32_t wr_before = iface.fifo_wr_ptr;
    auto wr_snapshot = iface.fifo_wr_ptr;  // a copy keeps the value it had
    dfb.reserve_back(1);
    dfb.push_back(1);
    ASSERT(iface.fifo_wr_ptr == wr_before + page_size);
    ASSERT(wr_snapshot == wr_before);
    ASSERT(iface.tiles_received == 1 && iface.tiles_acked == 0);
    ASSERT(dfb.pages_available_at_front(1) && !dfb.pages_available_at_front(2));
    dfb.wait_front(1);
    ASSERT(iface.fifo_rd_ptr == wr_before);
    dfb.pop_front(1);
    ASSERT(iface.tiles_acked == 1);
    ASSERT(iface.fifo_rd_ptr == wr_before + page_size);

    if (misuse == 1) {
        iface.fifo_wr_ptr = wr_before;
    } else if (misuse == 2) {
        ASSERT(pages == 0);
    }
}
