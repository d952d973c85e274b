// Example tiled matmul, compute: C block (Mb x Nb tiles) = sum over k blocks of A block @ B block,
// in DST-sized subblocks. Partial sums between k blocks go through an fp32 intermediate CB.
//
// Compile-time args: 0 number of k blocks, 1 Kb, 2 Mb, 3 Nb, 4 subblock height, 5 subblock width.
// CBs: c_0 in0 block, c_1 in1 block, c_24 partial sums (fp32), c_16 output.
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    constexpr uint32_t cb_in0 = tt::CBIndex::c_0;
    constexpr uint32_t cb_in1 = tt::CBIndex::c_1;
    constexpr uint32_t cb_partial = tt::CBIndex::c_24;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    constexpr uint32_t num_k_blocks = get_compile_time_arg_val(0);
    constexpr uint32_t kb = get_compile_time_arg_val(1);
    constexpr uint32_t mb = get_compile_time_arg_val(2);
    constexpr uint32_t nb = get_compile_time_arg_val(3);
    constexpr uint32_t sub_h = get_compile_time_arg_val(4);
    constexpr uint32_t sub_w = get_compile_time_arg_val(5);
    constexpr uint32_t sub_tiles = sub_h * sub_w;

    compute_kernel_hw_startup(cb_in0, cb_in1, cb_out);
    for (uint32_t blk = 0; blk < num_k_blocks; ++blk) {
        const bool last = blk + 1 == num_k_blocks;
        cb_wait_front(cb_in0, mb * kb);
        cb_wait_front(cb_in1, kb * nb);
        for (uint32_t sr = 0; sr < mb / sub_h; ++sr) {
            for (uint32_t sc = 0; sc < nb / sub_w; ++sc) {
                tile_regs_acquire();
                if (blk > 0) {
                    // Reload this subblock's partial sum; the matmuls accumulate on top of it.
                    copy_init(cb_partial);
                    cb_wait_front(cb_partial, sub_tiles);
                    for (uint32_t i = 0; i < sub_tiles; ++i) copy_tile(cb_partial, i, i);
                    cb_pop_front(cb_partial, sub_tiles);
                }
                matmul_block_init(cb_in0, cb_in1, 0, sub_w, sub_h, kb);
                for (uint32_t k = 0; k < kb; ++k) {
                    matmul_block(cb_in0, cb_in1, sr * sub_h * kb + k, k * nb + sc * sub_w, 0, 0, sub_w, sub_h, kb);
                }
                tile_regs_commit();
                const uint32_t cb_dst = last ? cb_out : cb_partial;
                cb_reserve_back(cb_dst, sub_tiles);
                tile_regs_wait();
                pack_reconfig_data_format(cb_dst);
                for (uint32_t i = 0; i < sub_tiles; ++i) pack_tile(i, cb_dst);
                tile_regs_release();
                cb_push_back(cb_dst, sub_tiles);
            }
        }
        cb_pop_front(cb_in0, mb * kb);
        cb_pop_front(cb_in1, kb * nb);
    }
}
