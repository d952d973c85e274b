// Test writer for the object API: a DataflowBuffer -> DRAM pages, through a Noc and a TensorAccessor.
// Even pages go from the buffer object itself, odd pages from a CoreLocalMem at its read pointer. With
// ZERO_FIRST_PAGE defined, the first page is then overwritten with zeros (Noc::async_write_zeros to DRAM).
//
// Compile-time args: 0 the buffer to drain, then TensorAccessorArgs at 1.
// Runtime args: 0 tensor address, 1 first page, 2 page count.
#include "api/core_local_mem.h"
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"

void kernel_main() {
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb_out = get_compile_time_arg_val(0);

    DataflowBuffer dfb(cb_out);
    const uint32_t page_bytes = dfb.get_entry_size();
    const auto dst = TensorAccessor(TensorAccessorArgs<1>(), addr);
    Noc noc;
    for (uint32_t p = first; p < first + count; ++p) {
        dfb.wait_front(1);
        if ((p - first) % 2 == 0) {
            noc.async_write(dfb, dst, page_bytes, {}, {.page_id = p});
        } else {
            CoreLocalMem<uint32_t> page(dfb.get_read_ptr());
            noc.async_write(page, dst, page_bytes, {}, {.page_id = p});
        }
        noc.async_writes_flushed();
        dfb.pop_front(1);
    }
    noc.async_write_barrier();
#ifdef ZERO_FIRST_PAGE
    // The last slot the kernel drained, zeroed, as the scratch that zeroes the first page in DRAM.
    CoreLocalMem<uint32_t> scratch(dfb.get_read_ptr());
    noc.async_write_zeros(scratch, page_bytes);
    noc.write_zeros_l1_barrier();
    noc.async_write_zeros(dst, page_bytes, {.page_id = first}, scratch);
    noc.write_zeros_dram_barrier();
#endif
}
