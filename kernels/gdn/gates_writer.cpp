// GDN gates, writer: g and beta tiles ([T, HV] fp32) in the order the reader read a and b.
//
// Compile-time args: TensorAccessorArgs of g/beta at 0.
// Common runtime args: 0 g address, 1 beta address.
// Runtime args: 0 first tile, 1 number of tiles.
// CBs: c_16 g, c_17 beta.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_g = tt::CBIndex::c_16;
    constexpr uint32_t cb_beta = tt::CBIndex::c_17;
    const uint32_t g_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t beta_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t first = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);

    constexpr auto out_args = TensorAccessorArgs<0>();
    const auto g = TensorAccessor(out_args, g_addr, get_tile_size(cb_g));
    const auto beta = TensorAccessor(out_args, beta_addr, get_tile_size(cb_beta));
    for (uint32_t t = first; t < first + count; ++t) {
        cb_wait_front(cb_g, 1);
        noc_async_write_page(t, g, get_read_ptr(cb_g));
        cb_wait_front(cb_beta, 1);
        noc_async_write_page(t, beta, get_read_ptr(cb_beta));
        noc_async_writes_flushed();
        cb_pop_front(cb_g, 1);
        cb_pop_front(cb_beta, 1);
    }
    noc_async_write_barrier();
}
