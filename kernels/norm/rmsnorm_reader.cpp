// RMSNorm over groups of tiles, reader. A unit is one (token tile row, group): the group's tiles of x
// (and of the gate z, gated mode) go to the compute kernel together; once per core, the weight rows
// (w in every row of a [32, group width] tensor) and a ones tile for the row sums.
//
// Unit u: token tile row r = u / groups, group g = u % groups; the group's first x tile is
// (x_row0 + r) * x_row_tiles + x_col0 + g * group_stride (x_row0: the first tile row of x normed, e.g.
// the one holding the last token), its first z tile r * z_row_tiles + g * group_tiles (z holds the
// groups back to back).
// Compile-time args: 0 gated (0/1), then TensorAccessorArgs of x, of z (x's again when not gated), of w.
// Common runtime args: 0 x address, 1 z address, 2 weight rows address, 3 groups per row, 4 group tiles,
//   5 group stride (tiles), 6 x first column tile, 7 x row tiles, 8 z row tiles, 9 x first tile row.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_0 x, c_1 z, c_2 weight rows (group tiles), c_3 ones (bf16).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_x = tt::CBIndex::c_0;
    constexpr uint32_t cb_z = tt::CBIndex::c_1;
    constexpr uint32_t cb_weight = tt::CBIndex::c_2;
    constexpr uint32_t cb_ones = tt::CBIndex::c_3;
    constexpr uint32_t gated = get_compile_time_arg_val(0);
    constexpr auto x_args = TensorAccessorArgs<1>();
    constexpr auto z_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
    constexpr auto w_args = TensorAccessorArgs<z_args.next_compile_time_args_offset()>();

    const uint32_t x_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t z_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t weight_addr = get_common_arg_val<uint32_t>(2);
    const uint32_t groups = get_common_arg_val<uint32_t>(3);
    const uint32_t group_tiles = get_common_arg_val<uint32_t>(4);
    const uint32_t group_stride = get_common_arg_val<uint32_t>(5);
    const uint32_t x_col0 = get_common_arg_val<uint32_t>(6);
    const uint32_t x_row_tiles = get_common_arg_val<uint32_t>(7);
    const uint32_t z_row_tiles = get_common_arg_val<uint32_t>(8);
    const uint32_t x_row0 = get_common_arg_val<uint32_t>(9);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    const uint32_t x_tile = get_tile_size(cb_x);
    const uint32_t w_tile = get_tile_size(cb_weight);
    const auto x = TensorAccessor(x_args, x_addr, x_tile);
    const auto weight = TensorAccessor(w_args, weight_addr, w_tile);

    // bf16 1.0 everywhere: the layout of the faces does not matter for a constant tile.
    cb_reserve_back(cb_ones, 1);
    volatile tt_l1_ptr uint16_t* ones = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(get_write_ptr(cb_ones));
    for (uint32_t i = 0; i < 32 * 32; ++i) ones[i] = 0x3F80;
    cb_push_back(cb_ones, 1);

    cb_reserve_back(cb_weight, group_tiles);
    for (uint32_t j = 0; j < group_tiles; ++j) {
        noc_async_read_page(j, weight, get_write_ptr(cb_weight) + j * w_tile);
    }
    noc_async_read_barrier();
    cb_push_back(cb_weight, group_tiles);

    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t row = u / groups;
        const uint32_t g = u % groups;
        const uint32_t x_first = (x_row0 + row) * x_row_tiles + x_col0 + g * group_stride;
        cb_reserve_back(cb_x, group_tiles);
        for (uint32_t j = 0; j < group_tiles; ++j) {
            noc_async_read_page(x_first + j, x, get_write_ptr(cb_x) + j * x_tile);
        }
        if constexpr (gated) {
            const uint32_t z_tile = get_tile_size(cb_z);
            const auto z = TensorAccessor(z_args, z_addr, z_tile);
            const uint32_t z_first = row * z_row_tiles + g * group_tiles;
            cb_reserve_back(cb_z, group_tiles);
            for (uint32_t j = 0; j < group_tiles; ++j) {
                noc_async_read_page(z_first + j, z, get_write_ptr(cb_z) + j * z_tile);
            }
        }
        noc_async_read_barrier();
        cb_push_back(cb_x, group_tiles);
        if constexpr (gated) cb_push_back(cb_z, group_tiles);
    }
}
