// GDN gate vectors, writer: each unit's quantity tiles (gate_vectors.h order within a token tile) to
// the gate-vector tensor; token tiles past the sequence (a ragged last chunk's padding) are dropped.
//
// Compile-time args: TensorAccessorArgs of the gate-vector tensor at 0.
// Common runtime args: 0 tensor address, 1 tiles per chunk (nt), 2 head tiles (HT), 3 token tiles,
//   4 quantities per token tile.
// Runtime args: 0 first unit, 1 number of units (unit u: chunk u / HT, head tile u % HT).
// CBs: c_16 quantity tiles.
#include "api/dataflow/dataflow_api.h"

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
    for (uint32_t u = first; u < first + count; ++u) {
        const uint32_t ht = u % head_tiles;
        for (uint32_t i = 0; i < nt; ++i) {
            const uint32_t tt = (u / head_tiles) * nt + i;
            for (uint32_t q = 0; q < kinds; ++q) {
                cb_wait_front(cb_out, 1);
                if (tt < token_tiles) {
                    noc_async_write_page((q * head_tiles + ht) * token_tiles + tt, out, get_read_ptr(cb_out));
                    noc_async_writes_flushed();
                }
                cb_pop_front(cb_out, 1);
            }
        }
    }
    noc_async_write_barrier();
}
