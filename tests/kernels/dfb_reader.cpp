// Test reader for the object API: DRAM pages -> a DataflowBuffer, through a Noc and a TensorAccessor.
// Each page is read in two halves, the second half at a byte offset on both ends. With ZERO_FIRST_HALF
// defined, the first half of each page is then zeroed in L1 (Noc::async_write_zeros).
//
// Named compile-time args: "cb_in" (the buffer to fill). Compile-time args: TensorAccessorArgs at 0.
// Runtime args, read as experimental::RtaArg: 0 tensor address, 1 first page, 2 page count.
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"
#include "experimental/kernel_args.h"

void kernel_main() {
    constexpr experimental::RtaArg<uint32_t> addr_arg{0}, first_arg{4}, count_arg{8};
    const uint32_t addr = experimental::get_arg(addr_arg);
    const uint32_t first = experimental::get_arg(first_arg);
    const uint32_t count = experimental::get_arg(count_arg);

    constexpr uint32_t cb_in = get_named_compile_time_arg_val("cb_in");
    DataflowBuffer dfb(cb_in);
    const uint32_t page_bytes = get_local_cb_interface(cb_in).fifo_page_size;
    const uint32_t half = page_bytes / 2;
    ASSERT(dfb.get_entry_size() == page_bytes);

    const auto src = TensorAccessor(TensorAccessorArgs<0>(), addr);
    Noc noc;
    for (uint32_t p = first; p < first + count; ++p) {
        dfb.reserve_back(1);
        noc.async_read(src, dfb, half, {.page_id = p}, {});
        noc.async_read(src, dfb, page_bytes - half, {.page_id = p, .offset_bytes = half}, {.offset_bytes = half});
        noc.async_read_barrier();
#ifdef ZERO_FIRST_HALF
        noc.async_write_zeros(dfb, half);
        noc.write_zeros_l1_barrier();
#endif
        dfb.push_back(1);
    }
}
