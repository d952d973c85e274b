// Page table update: writes the page ids this program carries in its runtime args into entries
// [first, first + n) of a request's resident page table, the UInt32 [rows, 32] tensor the attention kernels
// read (entry i at row i / 32, column i % 32; each 32 x 32 tile in the hardware's four-face order, the order
// fa::page_table_entry reads). One core. Each tile the range touches is read into L1, its entries in the
// range replaced and the tile written back whole, so every entry outside the range keeps its value.
//
// Compile-time args: TensorAccessorArgs of the table at 0.
// Common runtime args: 0 table address.
// Runtime args: 0 first entry, 1 number of entries n, 2 .. 2 + n - 1 the page ids in entry order.
// CBs: c_0 one UInt32 tile (scratch, never pushed).
#include "api/dataflow/dataflow_api.h"

namespace {

constexpr uint32_t kTileDim = 32;
constexpr uint32_t kFaceDim = 16;
constexpr uint32_t kTileEntries = kTileDim * kTileDim;

// Word of entry e (0 <= e < 1024, the entry's index inside its tile) in the tile's face order.
inline uint32_t word_in_tile(uint32_t e) {
    const uint32_t row = e / kTileDim;
    const uint32_t col = e % kTileDim;
    const uint32_t face = (row / kFaceDim) * 2 + col / kFaceDim;
    return face * kFaceDim * kFaceDim + (row % kFaceDim) * kFaceDim + col % kFaceDim;
}

}  // namespace

void kernel_main() {
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr uint32_t kIdsArg = 2;  // runtime arg of the first page id
    constexpr auto table_args = TensorAccessorArgs<0>();
    const uint32_t table_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);

    const auto table = TensorAccessor(table_args, table_addr, get_tile_size(cb));
    cb_reserve_back(cb, 1);
    const uint32_t l1 = get_write_ptr(cb);
    volatile tt_l1_ptr uint32_t* words = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(static_cast<uintptr_t>(l1));

    const uint32_t end = first + count;
    uint32_t i = first;
    while (i < end) {
        const uint32_t tile = i / kTileEntries;
        const uint32_t tile_end = (tile + 1) * kTileEntries < end ? (tile + 1) * kTileEntries : end;
        noc_async_read_page(tile, table, l1);
        noc_async_read_barrier();
        for (; i < tile_end; ++i) {
            words[word_in_tile(i % kTileEntries)] = get_arg_val<uint32_t>(kIdsArg + (i - first));
        }
        noc_async_write_page(tile, table, l1);
        // the next tile is read into the same L1: this one must have left it first
        noc_async_write_barrier();
    }
}
