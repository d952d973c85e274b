// Partial RoPE in place, reader. A unit is one (token tile row, head); units run row-major, so the
// cos/sin tiles of a token row are read once, at its first unit on this core, and stay for its heads.
// Only a head's first R (rotary) tiles are read; the rest of the head is never touched.
//
// Compile-time args: TensorAccessorArgs of x at 0, then of the cos/sin tables (fp32 [T, 32 R]).
// Common runtime args: 0 x address, 1 cos address, 2 sin address, 3 heads, 4 head tiles, 5 rotary
//   tiles R, 6 x row tiles, 7 sub-tile half width h (0: rotate_half's halves are whole tiles),
//   8 the table tile row of x's first token row (tables resident for many positions: a chunk reads its own).
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_0 x (R tiles a unit), c_1 cos (R), c_2 sin (R); with h > 0 (R = 1) also c_3: the x tile with
//   columns [0, h) and [h, 2h) exchanged in every row, built from c_0 by copies inside this core's L1
//   (faces are 16 x 16, row-major: h = 16 exchanges whole faces, h = 8 the two 16-byte halves of each
//   face row of faces 0 and 2), the rest of the tile as it is.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_x = tt::CBIndex::c_0;
    constexpr uint32_t cb_cos = tt::CBIndex::c_1;
    constexpr uint32_t cb_sin = tt::CBIndex::c_2;
    constexpr auto x_args = TensorAccessorArgs<0>();
    constexpr auto table_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();

    const uint32_t x_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t cos_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t sin_addr = get_common_arg_val<uint32_t>(2);
    const uint32_t heads = get_common_arg_val<uint32_t>(3);
    const uint32_t head_tiles = get_common_arg_val<uint32_t>(4);
    const uint32_t rotary_tiles = get_common_arg_val<uint32_t>(5);
    const uint32_t x_row_tiles = get_common_arg_val<uint32_t>(6);
    const uint32_t sub_half = get_common_arg_val<uint32_t>(7);
    const uint32_t table_row0 = get_common_arg_val<uint32_t>(8);
    constexpr uint32_t cb_swap = tt::CBIndex::c_3;
    constexpr uint32_t face_bytes = 16 * 16 * 2;  // bf16
    constexpr uint32_t face_row_bytes = 16 * 2;
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    const uint32_t x_tile = get_tile_size(cb_x);
    const uint32_t t_tile = get_tile_size(cb_cos);
    const auto x = TensorAccessor(x_args, x_addr, x_tile);
    const auto cos_table = TensorAccessor(table_args, cos_addr, t_tile);
    const auto sin_table = TensorAccessor(table_args, sin_addr, t_tile);

    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t row = u / heads;
        const uint32_t head = u % heads;
        if (u == first_unit || head == 0) {
            cb_reserve_back(cb_cos, rotary_tiles);
            cb_reserve_back(cb_sin, rotary_tiles);
            for (uint32_t j = 0; j < rotary_tiles; ++j) {
                const uint32_t page = (table_row0 + row) * rotary_tiles + j;
                noc_async_read_page(page, cos_table, get_write_ptr(cb_cos) + j * t_tile);
                noc_async_read_page(page, sin_table, get_write_ptr(cb_sin) + j * t_tile);
            }
            noc_async_read_barrier();
            cb_push_back(cb_cos, rotary_tiles);
            cb_push_back(cb_sin, rotary_tiles);
        }
        const uint32_t x_first = row * x_row_tiles + head * head_tiles;
        cb_reserve_back(cb_x, rotary_tiles);
        for (uint32_t j = 0; j < rotary_tiles; ++j) {
            noc_async_read_page(x_first + j, x, get_write_ptr(cb_x) + j * x_tile);
        }
        noc_async_read_barrier();
        if (sub_half != 0) {
            const uint32_t src = get_write_ptr(cb_x);
            cb_reserve_back(cb_swap, 1);
            const uint32_t dst = get_write_ptr(cb_swap);
            if (sub_half == 16) {
                for (uint32_t f = 0; f < 4; ++f) {
                    noc_async_read(get_noc_addr(src + (f ^ 1) * face_bytes), dst + f * face_bytes, face_bytes);
                }
            } else {
                const uint32_t piece = sub_half * 2;
                for (uint32_t f = 0; f < 4; f += 2) {
                    for (uint32_t row = 0; row < 16; ++row) {
                        const uint32_t at = f * face_bytes + row * face_row_bytes;
                        noc_async_read(get_noc_addr(src + at + piece), dst + at, piece);
                        noc_async_read(get_noc_addr(src + at), dst + at + piece, piece);
                    }
                    noc_async_read(get_noc_addr(src + (f + 1) * face_bytes), dst + (f + 1) * face_bytes, face_bytes);
                }
            }
            noc_async_read_barrier();
            cb_push_back(cb_swap, 1);
        }
        cb_push_back(cb_x, rotary_tiles);
    }
}
