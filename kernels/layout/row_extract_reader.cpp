// Rows of a tiled tensor, reader: gathers each listed row of a bf16 tiled tensor (Wt tiles a tile row) into
// row-major pages (2048 bytes = 1024 values = a row's part in 32 consecutive tiles), the rows' pages back to
// back in list order. In a 32 x 32 tile of 16 x 16 faces, row r's first 16 values are row r % 16 of face
// 2 * (r / 16) and its last 16 the same row of the next face, so each tile gives two 32-byte reads straight
// from DRAM (32-byte aligned, as the NoC's DRAM reads need); nothing else of the tile is read.
//
// Compile-time args: TensorAccessorArgs of the source at 0.
// Common runtime args: 0 source address, 1 tiles in a row (Wt), 2 output pages per row,
//   then per listed row k: 3 + 2k page of its tile row's first tile, 4 + 2k byte offset of the row inside
//   a tile's first face of it (2 * (r / 16) * 512 + (r % 16) * 32).
// Runtime args: 0 first output page, 1 number of output pages (output page q is page q % pages-per-row of
//   listed row q / pages-per-row).
// CBs: c_0 output pages (row-major bf16), double-buffered; past a row's last tile a page's bytes are
//   not written (the row's width is all the host reads).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr auto src_args = TensorAccessorArgs<0>();
    constexpr uint32_t face_bytes = 16 * 16 * 2;
    constexpr uint32_t half_row_bytes = 16 * 2;
    constexpr uint32_t tiles_per_page = 32;
    constexpr uint32_t first_row_arg = 3;
    const uint32_t src_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t row_tiles = get_common_arg_val<uint32_t>(1);
    const uint32_t pages_per_row = get_common_arg_val<uint32_t>(2);
    const uint32_t first_page = get_arg_val<uint32_t>(0);
    const uint32_t num_pages = get_arg_val<uint32_t>(1);

    const auto src = TensorAccessor(src_args, src_addr, get_tile_size(cb));
    for (uint32_t q = first_page; q < first_page + num_pages; ++q) {
        const uint32_t k = q / pages_per_row;
        const uint32_t p = q - k * pages_per_row;
        const uint32_t first_tile = get_common_arg_val<uint32_t>(first_row_arg + 2 * k);
        const uint32_t row_offset = get_common_arg_val<uint32_t>(first_row_arg + 2 * k + 1);
        cb_reserve_back(cb, 1);
        const uint32_t l1 = get_write_ptr(cb);
        const uint32_t j0 = p * tiles_per_page;
        const uint32_t j1 = j0 + tiles_per_page < row_tiles ? j0 + tiles_per_page : row_tiles;
        for (uint32_t j = j0; j < j1; ++j) {
            const uint32_t at = l1 + (j - j0) * 2 * half_row_bytes;
            noc_async_read(src.get_noc_addr(first_tile + j, row_offset), at, half_row_bytes);
            noc_async_read(src.get_noc_addr(first_tile + j, row_offset + face_bytes), at + half_row_bytes,
                           half_row_bytes);
        }
        noc_async_read_barrier();
        cb_push_back(cb, 1);
    }
}
