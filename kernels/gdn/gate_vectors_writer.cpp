// GDN gate vectors, writer: each unit's quantity tiles (gate_vectors.h order within a token tile) to
// the gate-vector tensor; token tiles past the sequence (a ragged last chunk's padding) are dropped.
//
// Compile-time args: TensorAccessorArgs of the gate-vector tensor at 0.
// Common runtime args: 0 tensor address, 1 tiles per chunk (nt), 2 head tiles (HT), 3 token tiles,
//   4 quantities per token tile.
// Runtime args: 0 first unit, 1 number of units (unit u: chunk u / HT, head tile u % HT).
// CBs: c_16 quantity tiles (two units' worth).
#include "api/dataflow/dataflow_api.h"
#include "gate_vectors.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t addr = get_common_arg_val<uint32_t>(0);
    const uint32_t nt = get_common_arg_val<uint32_t>(1);
    const uint32_t head_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t token_tiles = get_common_arg_val<uint32_t>(3);
    const uint32_t kinds = get_common_arg_val<uint32_t>(4);
    const uint32_t first = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);
    constexpr auto args = TensorAccessorArgs<0>();
    const auto out = TensorAccessor(args, addr, get_tile_size(cb_out));
    const uint32_t tile_bytes = get_tile_size(cb_out);
    const uint32_t row_tiles = gdn::gv::row_tiles(token_tiles);
    for (uint32_t u = first; u < first + count; ++u) {
        const uint32_t ht = u % head_tiles;
        // A unit's tiles leave together, so their writes overlap (the CB holds two units).
        cb_wait_front(cb_out, nt * kinds);
        const uint32_t l1 = get_read_ptr(cb_out);
        for (uint32_t i = 0; i < nt; ++i) {
            const uint32_t tt = (u / head_tiles) * nt + i;
            if (tt >= token_tiles) continue;
            for (uint32_t q = 0; q < kinds; ++q) {
                noc_async_write_page((q * head_tiles + ht) * row_tiles + tt, out, l1 + (i * kinds + q) * tile_bytes);
            }
        }
        noc_async_write_barrier();
        cb_pop_front(cb_out, nt * kinds);
    }
}
