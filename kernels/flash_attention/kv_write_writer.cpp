// K/V cache write, writer: puts the converted tile rows into their cache pages through the page table.
// When the chunk starts inside a 32-token tile (p0 % 32 != 0), the first tile-row's first p0 % 32
// rows are the cached prefix's: they are read back from the page and copied over the padding rows
// before the tile is written, so the prefix survives.
//
// Compile-time args:
//   0 Dt, 1 page_tiles (token tile-rows per page), 2 kv_heads, 3 table_tiles (UInt32 tiles of the table)
//   4..  TensorAccessorArgs of the K pool, the V pool, the page table
// Runtime args:
//   0 K pool address, 1 V pool address, 2 page table address, 3 first cache tile-row (p0 / 32),
//   4 rows of the first tile-row to keep (p0 % 32), 5 token tile-rows per kv head in the chunk,
//   6 first item, 7 number of items (item i: kv head i / tile-rows, tile-row i % tile-rows)
// Circular buffers: cb_page -> DRAM (per item Dt K tiles, then Dt V tiles); cb_keep: one page-format
//   tile of scratch for the prefix rows; cb_table: the page table (scratch, never pushed).
#include "api/dataflow/dataflow_api.h"
#include "flash_attention_common.h"

namespace {

constexpr uint32_t cb_page = tt::CBIndex::c_16;
constexpr uint32_t cb_keep = tt::CBIndex::c_1;
constexpr uint32_t kFace = 16;
constexpr uint32_t kFaceValues = kFace * kFace;

void copy_bytes(uint32_t dst, uint32_t src, uint32_t bytes) {
    volatile tt_l1_ptr uint8_t* d = reinterpret_cast<volatile tt_l1_ptr uint8_t*>(static_cast<uintptr_t>(dst));
    const volatile tt_l1_ptr uint8_t* s = reinterpret_cast<const volatile tt_l1_ptr uint8_t*>(static_cast<uintptr_t>(src));
    for (uint32_t i = 0; i < bytes; ++i) d[i] = s[i];
}

// Copies tile rows [0, rows) of the tile at src over those of the tile at dst. A tile row is one face
// row in each of two faces; in bfp8_b each face row also has its own shared-exponent byte.
void copy_tile_rows(uint32_t dst, uint32_t src, uint32_t rows, DataFormat format) {
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t half = 0; half < 2; ++half) {
            const uint32_t face = (r / kFace) * 2 + half;
            const uint32_t face_row = r % kFace;
            if (format == DataFormat::Bfp8_b) {
                constexpr uint32_t kExponentBytes = fa::kTileDim * fa::kTileDim / kFace;
                copy_bytes(dst + face * kFace + face_row, src + face * kFace + face_row, 1);
                const uint32_t mantissas = kExponentBytes + face * kFaceValues + face_row * kFace;
                copy_bytes(dst + mantissas, src + mantissas, kFace);
            } else {  // Float16_b
                constexpr uint32_t kBytes = 2;
                const uint32_t offset = (face * kFaceValues + face_row * kFace) * kBytes;
                copy_bytes(dst + offset, src + offset, kFace * kBytes);
            }
        }
    }
}

// The Dt tiles at the front of cb_page -> pool tiles first .. first + Dt, keeping the first
// `keep_rows` rows of what the pool held there.
template <typename Accessor>
void write_tile_row(const Accessor& pool, uint32_t first, uint32_t dt, uint32_t tile_bytes, uint32_t keep_rows,
                    uint32_t keep_l1, DataFormat format) {
    cb_wait_front(cb_page, dt);
    const uint32_t l1 = get_read_ptr(cb_page);
    for (uint32_t d = 0; d < dt; ++d) {
        if (keep_rows > 0) {
            noc_async_read_page(first + d, pool, keep_l1);
            noc_async_read_barrier();
            copy_tile_rows(l1 + d * tile_bytes, keep_l1, keep_rows, format);
        }
        noc_async_write_page(first + d, pool, l1 + d * tile_bytes);
    }
    noc_async_write_barrier();
    cb_pop_front(cb_page, dt);
}

}  // namespace

void kernel_main() {
    constexpr uint32_t Dt = get_compile_time_arg_val(0);
    constexpr uint32_t kPageTiles = get_compile_time_arg_val(1);
    constexpr uint32_t kKvHeads = get_compile_time_arg_val(2);
    constexpr uint32_t kTableTiles = get_compile_time_arg_val(3);
    constexpr auto k_args = TensorAccessorArgs<4>();
    constexpr auto v_args = TensorAccessorArgs<k_args.next_compile_time_args_offset()>();
    constexpr auto table_args = TensorAccessorArgs<v_args.next_compile_time_args_offset()>();

    const uint32_t k_addr = get_arg_val<uint32_t>(0);
    const uint32_t v_addr = get_arg_val<uint32_t>(1);
    const uint32_t table_addr = get_arg_val<uint32_t>(2);
    const uint32_t first_cache_row = get_arg_val<uint32_t>(3);
    const uint32_t keep_rows = get_arg_val<uint32_t>(4);
    const uint32_t rows_per_head = get_arg_val<uint32_t>(5);
    const uint32_t first_item = get_arg_val<uint32_t>(6);
    const uint32_t num_items = get_arg_val<uint32_t>(7);

    const uint32_t tile_bytes = get_tile_size(cb_page);
    const DataFormat format = get_dataformat(cb_page);
    const auto k = TensorAccessor(k_args, k_addr, tile_bytes);
    const auto v = TensorAccessor(v_args, v_addr, tile_bytes);
    const uint32_t table_tile_bytes = get_tile_size(fa::cb_table);
    const auto table = TensorAccessor(table_args, table_addr, table_tile_bytes);

    cb_reserve_back(fa::cb_table, kTableTiles);
    const uint32_t table_l1 = get_write_ptr(fa::cb_table);
    for (uint32_t t = 0; t < kTableTiles; ++t) noc_async_read_page(t, table, table_l1 + t * table_tile_bytes);
    noc_async_read_barrier();
    const volatile tt_l1_ptr uint32_t* page_table =
        reinterpret_cast<const volatile tt_l1_ptr uint32_t*>(static_cast<uintptr_t>(table_l1));
    cb_reserve_back(cb_keep, 1);
    const uint32_t keep_l1 = get_write_ptr(cb_keep);

    for (uint32_t item = first_item; item < first_item + num_items; ++item) {
        const uint32_t kv_head = item / rows_per_head;
        const uint32_t chunk_row = item % rows_per_head;
        const uint32_t cache_row = first_cache_row + chunk_row;
        const uint32_t page = fa::page_table_entry(page_table, cache_row / kPageTiles);
        const uint32_t first = ((page * kKvHeads + kv_head) * kPageTiles + cache_row % kPageTiles) * Dt;
        const uint32_t keep = chunk_row == 0 ? keep_rows : 0;
        write_tile_row(k, first, Dt, tile_bytes, keep, keep_l1, format);
        write_tile_row(v, first, Dt, tile_bytes, keep, keep_l1, format);
    }
}
