// GDN chunk preparation, writer: drains each unit's record (P, then T~ and -T^ interleaved; see
// scan_prep_chunk.h) into the chunk-record tensor.
//
// Unit u (value head hv, chunk c; u = hv * chunks + c) owns tiles [u * record_tiles, (u + 1) *
// record_tiles) of the record tensor.
//
// Compile-time args: TensorAccessorArgs of the record tensor at 0.
// Common runtime args: 0 record tensor address, 1 tiles per record.
// Runtime args: 0 first unit, 1 number of units (GDN_PREP_PIPELINED: see below).
// CBs: c_16 record tiles.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t records_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t record_tiles = get_common_arg_val<uint32_t>(1);
    constexpr auto record_args = TensorAccessorArgs<0>();
    const auto records = TensorAccessor(record_args, records_addr, get_tile_size(cb_out));
    auto write_record = [&](uint32_t u) {
        for (uint32_t i = 0; i < record_tiles; ++i) {
            cb_wait_front(cb_out, 1);
            noc_async_write_page(u * record_tiles + i, records, get_read_ptr(cb_out));
            noc_async_writes_flushed();
            cb_pop_front(cb_out, 1);
        }
    };
#ifdef GDN_PREP_PIPELINED
    // A preparing core of the pipelined scan (scan_pipelined_program): value head hv's chunks first,
    // first + stride, ...; once a record is in DRAM, each of the head's sequential cores is told by an
    // increment of its semaphore `first` (semaphore j counts the records of the chunks c with
    // c % stride == j, which arrive in order).
    // Common runtime args: 2 chunks. Runtime args: 0 value head, 1 first chunk, 2 stride, 3 number of
    // sequential cores of the head, then the NoC x and y of each.
    const uint32_t num_chunks = get_common_arg_val<uint32_t>(2);
    const uint32_t hv = get_arg_val<uint32_t>(0);
    const uint32_t first_chunk = get_arg_val<uint32_t>(1);
    const uint32_t stride = get_arg_val<uint32_t>(2);
    const uint32_t consumers = get_arg_val<uint32_t>(3);
    for (uint32_t c = first_chunk; c < num_chunks; c += stride) {
        write_record(hv * num_chunks + c);
        noc_async_write_barrier();
        for (uint32_t i = 0; i < consumers; ++i) {
            const uint32_t x = get_arg_val<uint32_t>(4 + 2 * i), y = get_arg_val<uint32_t>(5 + 2 * i);
            noc_semaphore_inc(get_noc_addr(x, y, get_semaphore(first_chunk)), 1);
        }
    }
#else
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) write_record(u);
#endif
    noc_async_write_barrier();
}
