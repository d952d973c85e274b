// Example tiled matmul, in0 side (runs on RISCV_1): the first core of each grid row reads the row's
// A block from DRAM and multicasts it to the other cores of the row; the others receive it.
//
// Compile-time args: TensorAccessorArgs of A at 0.
// Runtime args: 0 A address, 1 Kt (A's width in tiles), 2 number of k blocks, 3 Kb (tiles per k block),
//   4 Mb (tile rows per core), 5 first tile row of this core, 6 is_sender, 7-8 sender NoC x/y,
//   9-12 multicast rectangle NoC start x, y, end x, y (the row's receivers; this kernel multicasts on
//   NoC 1, so start is the rectangle's high corner and end its low one), 13 number of receivers,
//   14 semaphore id "receiver ready", 15 semaphore id "block valid".
// CBs: c_0 in0 block (Mb x Kb tiles, row-major).
#include "api/dataflow/dataflow_api.h"
#include "block_multicast.h"

void kernel_main() {
    constexpr uint32_t cb_in0 = tt::CBIndex::c_0;
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t kt_total = get_arg_val<uint32_t>(1);
    const uint32_t num_k_blocks = get_arg_val<uint32_t>(2);
    const uint32_t kb = get_arg_val<uint32_t>(3);
    const uint32_t mb = get_arg_val<uint32_t>(4);
    const uint32_t row0 = get_arg_val<uint32_t>(5);
    const bool is_sender = get_arg_val<uint32_t>(6) != 0;
    const uint32_t sender_x = get_arg_val<uint32_t>(7);
    const uint32_t sender_y = get_arg_val<uint32_t>(8);
    const uint32_t mx0 = get_arg_val<uint32_t>(9);
    const uint32_t my0 = get_arg_val<uint32_t>(10);
    const uint32_t mx1 = get_arg_val<uint32_t>(11);
    const uint32_t my1 = get_arg_val<uint32_t>(12);
    const uint32_t num_receivers = get_arg_val<uint32_t>(13);
    const uint32_t ready_addr = get_semaphore(get_arg_val<uint32_t>(14));
    const uint32_t valid_addr = get_semaphore(get_arg_val<uint32_t>(15));

    constexpr auto a_args = TensorAccessorArgs<0>();
    const uint32_t tile_bytes = get_tile_size(cb_in0);
    const auto a = TensorAccessor(a_args, a_addr, tile_bytes);
    const uint32_t block_tiles = mb * kb;

    for (uint32_t b = 0; b < num_k_blocks; ++b) {
        cb_reserve_back(cb_in0, block_tiles);
        const uint32_t l1 = get_write_ptr(cb_in0);
        if (is_sender) {
            for (uint32_t r = 0; r < mb; ++r) {
                for (uint32_t k = 0; k < kb; ++k) {
                    noc_async_read_page((row0 + r) * kt_total + b * kb + k, a, l1 + (r * kb + k) * tile_bytes);
                }
            }
            noc_async_read_barrier();
            block_multicast::send(l1, block_tiles * tile_bytes, {mx0, my0, mx1, my1}, num_receivers, ready_addr,
                                  valid_addr);
        } else {
            block_multicast::receive(sender_x, sender_y, ready_addr, valid_addr);
        }
        cb_push_back(cb_in0, block_tiles);
    }
}
