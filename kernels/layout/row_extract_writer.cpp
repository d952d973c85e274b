// Rows of a tiled tensor, writer: the reader's row-major pages (row_extract_reader.cpp) to the output's
// pages first_page .. first_page + n - 1, whole pages.
//
// Compile-time args: TensorAccessorArgs of the output at 0.
// Common runtime args: 0 output address.
// Runtime args: 0 first output page, 1 number of output pages.
// CBs: c_0 (the reader's).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr auto dst_args = TensorAccessorArgs<0>();
    const uint32_t dst_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t first_page = get_arg_val<uint32_t>(0);
    const uint32_t num_pages = get_arg_val<uint32_t>(1);

    const auto dst = TensorAccessor(dst_args, dst_addr, get_tile_size(cb));
    for (uint32_t p = first_page; p < first_page + num_pages; ++p) {
        cb_wait_front(cb, 1);
        noc_async_write_page(p, dst, get_read_ptr(cb));
        noc_async_writes_flushed();
        cb_pop_front(cb, 1);
    }
    noc_async_write_barrier();
}
