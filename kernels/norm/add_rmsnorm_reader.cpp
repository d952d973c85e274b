// Residual add + RMSNorm, reader. A unit is one token tile row: its W tiles of the residual x and of the
// block output y go to the compute kernel, `chunk` tiles at a time (the compute kernel consumes them a
// DST batch at a time, so a unit need not fit L1 twice over).
//
// The weight rows tensor holds 1 + w in every row; the compute kernel broadcasts row 0 of each tile
// over the tile, so only row 0 is read: per tile, row 0 of face 0 and row 0 of face 1 (a face is 16 x 16
// values, row-major, faces 0 and 1 side by side in the tile's top half). That is 1/16 of the tile's bytes
// (and, on a core running one unit, a third of its reads otherwise).
//
// Unit u: x's tile row x_row0 + u, y's tile row u.
// Compile-time args: TensorAccessorArgs of x, of y, of the weight rows.
// Common runtime args: 0 x address, 1 y address, 2 weight rows address, 3 row tiles (W), 4 x first tile
//   row, 5 tiles per read chunk.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_0 x, c_1 y, c_2 weight rows (W tiles, row 0 of each filled), c_3 ones (bf16).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_x = tt::CBIndex::c_0;
    constexpr uint32_t cb_y = tt::CBIndex::c_1;
    constexpr uint32_t cb_weight = tt::CBIndex::c_2;
    constexpr uint32_t cb_ones = tt::CBIndex::c_3;
    constexpr auto x_args = TensorAccessorArgs<0>();
    constexpr auto y_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
    constexpr auto w_args = TensorAccessorArgs<y_args.next_compile_time_args_offset()>();

    const uint32_t x_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t y_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t weight_addr = get_common_arg_val<uint32_t>(2);
    const uint32_t row_tiles = get_common_arg_val<uint32_t>(3);
    const uint32_t x_row0 = get_common_arg_val<uint32_t>(4);
    const uint32_t chunk = get_common_arg_val<uint32_t>(5);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    const uint32_t x_tile = get_tile_size(cb_x);
    const uint32_t y_tile = get_tile_size(cb_y);
    const uint32_t w_tile = get_tile_size(cb_weight);
    const auto x = TensorAccessor(x_args, x_addr, x_tile);
    const auto y = TensorAccessor(y_args, y_addr, y_tile);
    const auto weight = TensorAccessor(w_args, weight_addr, w_tile);

    // bf16 1.0 everywhere: the layout of the faces does not matter for a constant tile.
    cb_reserve_back(cb_ones, 1);
    volatile tt_l1_ptr uint16_t* ones = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(get_write_ptr(cb_ones));
    for (uint32_t i = 0; i < 32 * 32; ++i) ones[i] = 0x3F80;
    cb_push_back(cb_ones, 1);

    // Row 0 of faces 0 and 1 of every weight tile.
    const uint32_t face_bytes = w_tile / 4;
    const uint32_t face_row_bytes = face_bytes / 16;
    cb_reserve_back(cb_weight, row_tiles);
    for (uint32_t j = 0; j < row_tiles; ++j) {
        const uint32_t l1 = get_write_ptr(cb_weight) + j * w_tile;
        noc_async_read(weight.get_noc_addr(j, 0), l1, face_row_bytes);
        noc_async_read(weight.get_noc_addr(j, face_bytes), l1 + face_bytes, face_row_bytes);
    }
    noc_async_read_barrier();
    cb_push_back(cb_weight, row_tiles);

    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t x_first = (x_row0 + u) * row_tiles;
        const uint32_t y_first = u * row_tiles;
        for (uint32_t j = 0; j < row_tiles; j += chunk) {
            const uint32_t n = row_tiles - j < chunk ? row_tiles - j : chunk;
            cb_reserve_back(cb_x, n);
            cb_reserve_back(cb_y, n);
            const uint32_t x_l1 = get_write_ptr(cb_x);
            const uint32_t y_l1 = get_write_ptr(cb_y);
            for (uint32_t i = 0; i < n; ++i) {
                noc_async_read_page(x_first + j + i, x, x_l1 + i * x_tile);
                noc_async_read_page(y_first + j + i, y, y_l1 + i * y_tile);
            }
            noc_async_read_barrier();
            cb_push_back(cb_x, n);
            cb_push_back(cb_y, n);
        }
    }
}
