// K/V cache write, reader: the chunk's new K and V tile rows (bf16) for the compute kernel to convert.
//
// Compile-time args: 0 Dt, 1.. TensorAccessorArgs of new K, then of new V.
// Runtime args: 0 new K address, 1 new V address, 2 first item, 3 number of items. Item i is tile-row i
//               of the [kv_heads * tile-rows, Dt] tile grid: kv head i / tile-rows, tile-row i % tile-rows.
// Circular buffers: cb_new <- per item, the Dt K tiles, then the Dt V tiles.
// The new K/V tensors are [kv_heads, tile-rows * 32, head_dim], already shifted so that their row 0
// is the cache position (p0 / 32) * 32: rows before p0 are padding the writer replaces.
#include "api/dataflow/dataflow_api.h"

namespace {
constexpr uint32_t cb_new = tt::CBIndex::c_0;

// The Dt tiles of tile-row `item` of one tensor -> cb_new.
template <typename Accessor>
void read_tile_row(const Accessor& tensor, uint32_t item, uint32_t dt, uint32_t tile_bytes) {
    cb_reserve_back(cb_new, dt);
    uint32_t l1 = get_write_ptr(cb_new);
    for (uint32_t d = 0; d < dt; ++d) {
        noc_async_read_page(item * dt + d, tensor, l1);
        l1 += tile_bytes;
    }
    noc_async_read_barrier();
    cb_push_back(cb_new, dt);
}
}  // namespace

void kernel_main() {
    constexpr uint32_t Dt = get_compile_time_arg_val(0);
    constexpr auto k_args = TensorAccessorArgs<1>();
    constexpr auto v_args = TensorAccessorArgs<k_args.next_compile_time_args_offset()>();

    const uint32_t k_addr = get_arg_val<uint32_t>(0);
    const uint32_t v_addr = get_arg_val<uint32_t>(1);
    const uint32_t first_item = get_arg_val<uint32_t>(2);
    const uint32_t num_items = get_arg_val<uint32_t>(3);

    const uint32_t tile_bytes = get_tile_size(cb_new);
    const auto k = TensorAccessor(k_args, k_addr, tile_bytes);
    const auto v = TensorAccessor(v_args, v_addr, tile_bytes);
    for (uint32_t item = first_item; item < first_item + num_items; ++item) {
        read_tile_row(k, item, Dt, tile_bytes);
        read_tile_row(v, item, Dt, tile_bytes);
    }
}
