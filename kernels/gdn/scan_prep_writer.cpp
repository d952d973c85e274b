// GDN chunk preparation, writer: drains each unit's record (P, then T~ and -T^ interleaved; see
// scan_prep_chunk.h) into the chunk-record tensor (GDN_PREP_PIPELINED: into the sequential cores' L1).
//
// Unit u (value head hv, chunk c; u = hv * chunks + c) owns tiles [u * record_tiles, (u + 1) *
// record_tiles) of the record tensor.
//
// Compile-time args: TensorAccessorArgs of the record tensor at 0.
// Common runtime args: 0 record tensor address, 1 tiles per record.
// Runtime args: 0 first unit, 1 number of units (GDN_PREP_PIPELINED: see below).
// CBs: c_16 record tiles.
#include "api/dataflow/dataflow_api.h"
#include "scan_pipeline.h"

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
    // first + stride, ...; each record goes into a free record slot in the L1 of every sequential core of
    // the head (scan_pipeline.h), not to DRAM. When the head's sequential cores are one segment of a grid
    // row each tile goes to all of them in one multicast, to consumer 0's slot address: every sequential
    // core holds the same CBs and reserves the same records in the same order, so its slot sits at the
    // same L1 address (tt-metal places a CB at one address on all its cores). Else one write each.
    // Common runtime args: 2 chunks, 3 record slots. Runtime args: 0 value head, 1 first chunk (this
    // producer's index j), 2 stride (producers of the head), 3 number of sequential cores of the head,
    // 4 whether they can be multicast to, 5-8 their rectangle (NoC x/y start, x/y end, in this kernel's
    // NoC's corner order), then the NoC x and y of each, in value-block order.
    constexpr uint32_t kFirstConsumerArg = 9;
    const uint32_t num_chunks = get_common_arg_val<uint32_t>(2);
    const uint32_t slots = get_common_arg_val<uint32_t>(3);
    const uint32_t first_chunk = get_arg_val<uint32_t>(1);
    const uint32_t stride = get_arg_val<uint32_t>(2);
    const uint32_t consumers = get_arg_val<uint32_t>(3);
    const bool multicast = get_arg_val<uint32_t>(4) != 0;
    const uint32_t tile_bytes = get_tile_size(cb_out);
    auto consumer_x = [](uint32_t i) { return get_arg_val<uint32_t>(kFirstConsumerArg + 2 * i); };
    auto consumer_y = [](uint32_t i) { return get_arg_val<uint32_t>(kFirstConsumerArg + 1 + 2 * i); };
    auto sem_word = [](uint32_t id) { return reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(id)); };
    uint32_t k = 0;  // this producer's records so far
    for (uint32_t c = first_chunk; c < num_chunks; c += stride, ++k) {
        for (uint32_t i = 0; i < consumers; ++i) noc_semaphore_wait_min(sem_word(gdn::pipeline::free_sem(i, slots)), k + 1);
        for (uint32_t t = 0; t < record_tiles; ++t) {
            cb_wait_front(cb_out, 1);
            const uint32_t offset = t * tile_bytes;
            if (multicast) {
                const uint32_t slot = *sem_word(gdn::pipeline::address_sem(0, k, slots));
                noc_async_write_multicast(get_read_ptr(cb_out),
                                          get_noc_multicast_addr(get_arg_val<uint32_t>(5), get_arg_val<uint32_t>(6),
                                                                 get_arg_val<uint32_t>(7), get_arg_val<uint32_t>(8),
                                                                 slot + offset),
                                          tile_bytes, consumers);
            } else {
                for (uint32_t i = 0; i < consumers; ++i) {
                    const uint32_t slot = *sem_word(gdn::pipeline::address_sem(i, k, slots));
                    noc_async_write(get_read_ptr(cb_out), get_noc_addr(consumer_x(i), consumer_y(i), slot + offset),
                                    tile_bytes);
                }
            }
            noc_async_writes_flushed();
            cb_pop_front(cb_out, 1);
        }
        noc_async_write_barrier();
        for (uint32_t i = 0; i < consumers; ++i) {
            noc_semaphore_inc(get_noc_addr(consumer_x(i), consumer_y(i), get_semaphore(first_chunk)), 1);
        }
    }
#else
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) write_record(u);
#endif
    noc_async_write_barrier();
}
