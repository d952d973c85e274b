// Residual add + RMSNorm, writer. Per unit (a token tile row), in the order the compute kernel makes
// them: the W tiles of the sum s into x's tile row x_row0 + u (in place: the reader has read each of
// them before its sum exists), then the W tiles of the norm into out's tile row u.
//
// One flush per DST batch, so the writes of a batch overlap instead of each waiting for the last to
// leave L1.
// Compile-time args: 0 DST batch (tiles), then TensorAccessorArgs of x, of out.
// Common runtime args: 0 x address, 1 out address, 2 row tiles (W), 3 x first tile row.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_17 s, c_16 out.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    constexpr uint32_t cb_sum_out = tt::CBIndex::c_17;
    constexpr uint32_t batch = get_compile_time_arg_val(0);
    constexpr auto x_args = TensorAccessorArgs<1>();
    constexpr auto out_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
    const uint32_t x_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t out_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t row_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t x_row0 = get_common_arg_val<uint32_t>(3);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    // s and out may differ in format (out in bfp8 for a tensor-parallel gather): each CB's own page size
    const uint32_t sum_tile = get_tile_size(cb_sum_out);
    const uint32_t out_tile = get_tile_size(cb_out);
    const auto x = TensorAccessor(x_args, x_addr, sum_tile);
    const auto out = TensorAccessor(out_args, out_addr, out_tile);
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t x_first = (x_row0 + u) * row_tiles;
        for (uint32_t j = 0; j < row_tiles; j += batch) {
            cb_wait_front(cb_sum_out, batch);
            for (uint32_t i = 0; i < batch; ++i) {
                noc_async_write_page(x_first + j + i, x, get_read_ptr(cb_sum_out) + i * sum_tile);
            }
            noc_async_writes_flushed();
            cb_pop_front(cb_sum_out, batch);
        }
        const uint32_t out_first = u * row_tiles;
        for (uint32_t j = 0; j < row_tiles; j += batch) {
            cb_wait_front(cb_out, batch);
            for (uint32_t i = 0; i < batch; ++i) {
                noc_async_write_page(out_first + j + i, out, get_read_ptr(cb_out) + i * out_tile);
            }
            noc_async_writes_flushed();
            cb_pop_front(cb_out, batch);
        }
    }
    noc_async_write_barrier();
}
