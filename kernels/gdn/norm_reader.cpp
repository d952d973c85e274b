// GDN gated RMSNorm, reader: per (token tile, value head) unit the head's V/32 tiles of the scan
// output o and of the gate z; once, the norm weight row tiles ([32, V] fp32, every row the same) and a
// ones tile.
//
// Unit u: token tile tt = u / HV, value head hv = u % HV; o's head starts at column tile
// o_col0 + hv * VT, z's at hv * VT.
// Compile-time args: TensorAccessorArgs of o/z at 0, then of the weight rows.
// Common runtime args: 0 o address, 1 z address, 2 weight rows address, 3 value heads (HV),
//   4 value tiles (VT), 5 o width in tiles, 6 o first column tile, 7 z width in tiles.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_0 o, c_1 z, c_2 weight rows (VT tiles), c_3 ones tile (bf16).
#include "api/dataflow/dataflow_api.h"
#include "gdn_dataflow.h"

void kernel_main() {
    constexpr uint32_t cb_o = tt::CBIndex::c_0;
    constexpr uint32_t cb_z = tt::CBIndex::c_1;
    constexpr uint32_t cb_weight = tt::CBIndex::c_2;
    constexpr uint32_t cb_ones = tt::CBIndex::c_3;
    const uint32_t o_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t z_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t weight_addr = get_common_arg_val<uint32_t>(2);
    const uint32_t value_heads = get_common_arg_val<uint32_t>(3);
    const uint32_t value_tiles = get_common_arg_val<uint32_t>(4);
    const uint32_t o_row_tiles = get_common_arg_val<uint32_t>(5);
    const uint32_t o_col0 = get_common_arg_val<uint32_t>(6);
    const uint32_t z_row_tiles = get_common_arg_val<uint32_t>(7);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    constexpr auto oz_args = TensorAccessorArgs<0>();
    constexpr auto w_args = TensorAccessorArgs<oz_args.next_compile_time_args_offset()>();
    const uint32_t tile_bytes = get_tile_size(cb_o);
    const auto o = TensorAccessor(oz_args, o_addr, tile_bytes);
    const auto z = TensorAccessor(oz_args, z_addr, get_tile_size(cb_z));
    const auto weight = TensorAccessor(w_args, weight_addr, get_tile_size(cb_weight));

    cb_reserve_back(cb_ones, 1);
    gdn::write_bf16_pattern(get_write_ptr(cb_ones), [](uint32_t, uint32_t) { return true; });
    cb_push_back(cb_ones, 1);
    cb_reserve_back(cb_weight, value_tiles);
    for (uint32_t j = 0; j < value_tiles; ++j) {
        noc_async_read_page(j, weight, get_write_ptr(cb_weight) + j * get_tile_size(cb_weight));
    }
    noc_async_read_barrier();
    cb_push_back(cb_weight, value_tiles);

    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t tt = u / value_heads;
        const uint32_t hv = u % value_heads;
        cb_reserve_back(cb_o, value_tiles);
        cb_reserve_back(cb_z, value_tiles);
        const uint32_t o_first = tt * o_row_tiles + o_col0 + hv * value_tiles;
        const uint32_t z_first = tt * z_row_tiles + hv * value_tiles;
        for (uint32_t j = 0; j < value_tiles; ++j) {
            noc_async_read_page(o_first + j, o, get_write_ptr(cb_o) + j * tile_bytes);
            noc_async_read_page(z_first + j, z, get_write_ptr(cb_z) + j * get_tile_size(cb_z));
        }
        noc_async_read_barrier();
        cb_push_back(cb_o, value_tiles);
        cb_push_back(cb_z, value_tiles);
    }
}
