// Example tiled matmul, in1 side and output (runs on RISCV_0): the first core of each grid column
// reads the column's B block from DRAM and multicasts it down the column; then every core writes
// its output block, subblock by subblock, to DRAM.
//
// Compile-time args: TensorAccessorArgs of B at 0, of C after it.
// Runtime args: 0 B address, 1 C address, 2 Nt (B's and C's width in tiles), 3 number of k blocks,
//   4 Kb, 5 Nb (tile columns per core), 6 first tile column of this core, 7 is_sender, 8-9 sender NoC x/y,
//   10-13 multicast rectangle NoC x0, y0, x1, y1, 14 number of receivers, 15 semaphore "receiver ready",
//   16 semaphore "block valid", 17 Mb, 18 first tile row of this core, 19 subblock height, 20 subblock width.
// CBs: c_1 in1 block (Kb x Nb tiles, row-major), c_16 output subblocks.
#include "api/dataflow/dataflow_api.h"
#include "block_multicast.h"

void kernel_main() {
    constexpr uint32_t cb_in1 = tt::CBIndex::c_1;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t b_addr = get_arg_val<uint32_t>(0);
    const uint32_t c_addr = get_arg_val<uint32_t>(1);
    const uint32_t nt_total = get_arg_val<uint32_t>(2);
    const uint32_t num_k_blocks = get_arg_val<uint32_t>(3);
    const uint32_t kb = get_arg_val<uint32_t>(4);
    const uint32_t nb = get_arg_val<uint32_t>(5);
    const uint32_t col0 = get_arg_val<uint32_t>(6);
    const bool is_sender = get_arg_val<uint32_t>(7) != 0;
    const uint32_t sender_x = get_arg_val<uint32_t>(8);
    const uint32_t sender_y = get_arg_val<uint32_t>(9);
    const uint32_t mx0 = get_arg_val<uint32_t>(10);
    const uint32_t my0 = get_arg_val<uint32_t>(11);
    const uint32_t mx1 = get_arg_val<uint32_t>(12);
    const uint32_t my1 = get_arg_val<uint32_t>(13);
    const uint32_t num_receivers = get_arg_val<uint32_t>(14);
    const uint32_t ready_addr = get_semaphore(get_arg_val<uint32_t>(15));
    const uint32_t valid_addr = get_semaphore(get_arg_val<uint32_t>(16));
    const uint32_t mb = get_arg_val<uint32_t>(17);
    const uint32_t row0 = get_arg_val<uint32_t>(18);
    const uint32_t sub_h = get_arg_val<uint32_t>(19);
    const uint32_t sub_w = get_arg_val<uint32_t>(20);

    constexpr auto b_args = TensorAccessorArgs<0>();
    constexpr auto c_args = TensorAccessorArgs<b_args.next_compile_time_args_offset()>();
    const uint32_t in1_tile = get_tile_size(cb_in1);
    const uint32_t out_tile = get_tile_size(cb_out);
    const auto b_acc = TensorAccessor(b_args, b_addr, in1_tile);
    const auto c_acc = TensorAccessor(c_args, c_addr, out_tile);
    const uint32_t block_tiles = kb * nb;

    for (uint32_t blk = 0; blk < num_k_blocks; ++blk) {
        cb_reserve_back(cb_in1, block_tiles);
        const uint32_t l1 = get_write_ptr(cb_in1);
        if (is_sender) {
            for (uint32_t k = 0; k < kb; ++k) {
                for (uint32_t c = 0; c < nb; ++c) {
                    noc_async_read_page((blk * kb + k) * nt_total + col0 + c, b_acc, l1 + (k * nb + c) * in1_tile);
                }
            }
            noc_async_read_barrier();
            block_multicast::send(l1, block_tiles * in1_tile, {mx0, my0, mx1, my1}, num_receivers, ready_addr,
                                  valid_addr);
        } else {
            block_multicast::receive(sender_x, sender_y, ready_addr, valid_addr);
        }
        cb_push_back(cb_in1, block_tiles);
    }

    // Output subblocks arrive in row-major subblock order, each sub_h x sub_w tiles row-major.
    for (uint32_t sr = 0; sr < mb / sub_h; ++sr) {
        for (uint32_t sc = 0; sc < nb / sub_w; ++sc) {
            cb_wait_front(cb_out, sub_h * sub_w);
            uint32_t l1 = get_read_ptr(cb_out);
            for (uint32_t r = 0; r < sub_h; ++r) {
                for (uint32_t c = 0; c < sub_w; ++c) {
                    uint32_t tile = (row0 + sr * sub_h + r) * nt_total + col0 + sc * sub_w + c;
                    noc_async_write_page(tile, c_acc, l1);
                    l1 += out_tile;
                }
            }
            noc_async_write_barrier();
            cb_pop_front(cb_out, sub_h * sub_w);
        }
    }
}
