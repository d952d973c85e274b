// Test reader written against Metal 2.0 names: walks a range of a tensor's pages with the accessor's
// page iterator and reads each one, through the page itself as the Noc endpoint, into a DataflowBuffer.
//
// Bindings: args::first, args::count (runtime), args::page_bytes (compile time), dfb::in, tensor::src;
// get_vararg(0) is a value written into the first word of every page read (0: none).
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"
#include "experimental/kernel_args.h"

void kernel_main() {
    const uint32_t first = get_arg(args::first);
    const uint32_t count = get_arg(args::count);
    constexpr uint32_t page_bytes = get_arg(args::page_bytes);
    const uint32_t marker = get_vararg(0);

    const auto src = TensorAccessor(tensor::src);
    DataflowBuffer dfb(dfb::in);
    Noc noc;
    for (const auto& page : src.pages(first, first + count)) {
        dfb.reserve_back(1);
        noc.async_read(page, dfb, page_bytes, {}, {});
        noc.async_read_barrier();
        if (marker) *reinterpret_cast<volatile uint32_t*>(uintptr_t(dfb.get_write_ptr())) = marker;
        dfb.push_back(1);
    }
}
