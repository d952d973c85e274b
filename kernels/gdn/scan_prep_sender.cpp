// GDN fused scan, helper core's writer: sends each record the helper prepared (P, then T~ and -T^
// interleaved; scan_prep_chunk.h) into the L1 slot its value head's core asked for (scan_offload.h).
//
// Compile-time args: none.
// Common runtime args: 0 chunks, 1 tiles per record, 2 offload numerator, 3 offload denominator.
// Runtime args: 0 number of value heads served, then per served head its core's NoC x and y.
// CBs: c_16 record tiles (from the compute kernel, one at a time).
#include "api/dataflow/dataflow_api.h"
#include "scan_offload.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t num_chunks = get_common_arg_val<uint32_t>(0);
    const uint32_t record_tiles = get_common_arg_val<uint32_t>(1);
    const uint32_t offload_num = get_common_arg_val<uint32_t>(2);
    const uint32_t offload_den = get_common_arg_val<uint32_t>(3);
    const uint32_t heads = get_arg_val<uint32_t>(0);
    const uint32_t tile_bytes = get_tile_size(cb_out);
    uint32_t sent = 0;  // records per served head so far (the same for all: they go round by round)
    for (uint32_t c = 0; c < num_chunks; ++c) {
        if (!gdn::offload::offloaded(c, offload_num, offload_den)) continue;
        const uint32_t slot = sent % gdn::offload::kRecordSlots;
        for (uint32_t h = 0; h < heads; ++h) {
            const uint32_t x = get_arg_val<uint32_t>(1 + 2 * h), y = get_arg_val<uint32_t>(2 + 2 * h);
            noc_semaphore_wait_min(
                reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(gdn::offload::kSemFree + h)), sent + 1);
            const uint32_t dest = *reinterpret_cast<volatile tt_l1_ptr uint32_t*>(
                get_semaphore(gdn::offload::kSemAddress + h * gdn::offload::kRecordSlots + slot));
            for (uint32_t t = 0; t < record_tiles; ++t) {
                cb_wait_front(cb_out, 1);
                noc_async_write(get_read_ptr(cb_out), get_noc_addr(x, y, dest + t * tile_bytes), tile_bytes);
                noc_async_writes_flushed();
                cb_pop_front(cb_out, 1);
            }
            noc_async_write_barrier();
            noc_semaphore_inc(get_noc_addr(x, y, get_semaphore(gdn::offload::kSemReady)), 1);
        }
        ++sent;
    }
    noc_async_write_barrier();
}
