// GDN chunk preparation, writer: drains each unit's record (P, then T~ and -T^ interleaved; see
// scan_prep_chunk.h) into the chunk-record tensor.
//
// Unit u (value head hv, chunk c; u = hv * chunks + c) owns tiles [u * record_tiles, (u + 1) *
// record_tiles) of the record tensor.
//
// Compile-time args: TensorAccessorArgs of the record tensor at 0.
// Common runtime args: 0 record tensor address, 1 tiles per record.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_16 record tiles.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t records_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t record_tiles = get_common_arg_val<uint32_t>(1);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);
    constexpr auto record_args = TensorAccessorArgs<0>();
    const auto records = TensorAccessor(record_args, records_addr, get_tile_size(cb_out));
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        for (uint32_t i = 0; i < record_tiles; ++i) {
            cb_wait_front(cb_out, 1);
            noc_async_write_page(u * record_tiles + i, records, get_read_ptr(cb_out));
            noc_async_writes_flushed();
            cb_pop_front(cb_out, 1);
        }
    }
    noc_async_write_barrier();
}
