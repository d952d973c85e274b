// MLP gate and up projections with their SwiGLU, compute: out = silu(x Wg) * (x Wu) from one 2D-multicast
// matmul over a weight whose tile columns alternate gate and up (ops/linear/swiglu.py pair_gate_up).
//
// The K loop is the plain matmul's: each K block adds an h x w sub-block of products to its partial sums
// (packer L1 accumulation past two K blocks, else a spill and reload through the partials CB). On the last
// K block the whole sum of a sub-block sits in DST; its w columns are w / 2 (gate, up) pairs, so the SFPU
// takes silu of each gate tile, multiplies it by its up tile, and only the h x w / 2 products are packed.
// The [T, 2 I] gate | up pair never leaves the core.
//
// Compile-time args (the layout of the mirrored factory's compute args, ops/upstream/matmul_mcast.py):
//   0 in0_block_w (K tiles a block), 1 sub-blocks down the per-core block, 2 in0 block tiles,
//   3 in0 sub-block tiles, 4 sub-blocks across, 5 in1 block tiles, 6 in1 block width (tiles, gate and up),
//   7 K blocks, 8 / 9 output blocks across / down (one each: the partials CB is laid under the output),
//   10 sub-block height, 11 sub-block width (in1 tiles, even), 12 sub-block tiles (in1 tiles).
// Defines: PACKER_L1_ACC (partials accumulate in L1 across K blocks), FP32_DEST_ACC_EN.
#include <cstdint>

#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/tile_move_copy.h"

namespace {

// DST holds a sub-block row-major, `sub_w` tiles a row: (gate, up) pairs side by side. Leaves each row's
// products at the front of DST, row-major, sub_h x sub_w / 2. A product goes to an index at or below its
// gate's, and every lower index has been read by then, so it overwrites nothing still needed.
template <uint32_t sub_h, uint32_t sub_w>
void swiglu_in_dst() {
    constexpr uint32_t pairs = sub_w / 2;
    silu_tile_init();
    for (uint32_t r = 0; r < sub_h; ++r) {
        for (uint32_t p = 0; p < pairs; ++p) {
            silu_tile(r * sub_w + 2 * p);
        }
    }
    mul_binary_tile_init();
    for (uint32_t r = 0; r < sub_h; ++r) {
        for (uint32_t p = 0; p < pairs; ++p) {
            mul_binary_tile(r * sub_w + 2 * p, r * sub_w + 2 * p + 1, r * pairs + p);
        }
    }
}

}  // namespace

void kernel_main() {
    constexpr uint32_t in0_block_w = get_compile_time_arg_val(0);
    constexpr uint32_t in0_num_subblocks = get_compile_time_arg_val(1);
    constexpr uint32_t in0_block_tiles = get_compile_time_arg_val(2);
    constexpr uint32_t in0_subblock_tiles = get_compile_time_arg_val(3);
    constexpr uint32_t in1_num_subblocks = get_compile_time_arg_val(4);
    constexpr uint32_t in1_block_tiles = get_compile_time_arg_val(5);
    constexpr uint32_t in1_block_w = get_compile_time_arg_val(6);
    constexpr uint32_t num_k_blocks = get_compile_time_arg_val(7);
    constexpr uint32_t out_blocks_w = get_compile_time_arg_val(8);
    constexpr uint32_t out_blocks_h = get_compile_time_arg_val(9);
    constexpr uint32_t sub_h = get_compile_time_arg_val(10);
    constexpr uint32_t sub_w = get_compile_time_arg_val(11);
    constexpr uint32_t sub_tiles = get_compile_time_arg_val(12);
    constexpr uint32_t out_sub_tiles = sub_tiles / 2;
    static_assert(sub_w % 2 == 0, "a sub-block holds whole (gate, up) pairs");
    static_assert(out_blocks_w == 1 && out_blocks_h == 1, "one output block a core: the partials lie under it");

    // the factory's CB indices (matmul_mcast.py CB_IN0, CB_IN1, CB_OUT, CB_INTERM0), which its readers and writers use
    constexpr uint32_t cb_in0 = tt::CBIndex::c_0;
    constexpr uint32_t cb_in1 = tt::CBIndex::c_1;
    constexpr uint32_t cb_out = tt::CBIndex::c_4;
    constexpr uint32_t cb_partials = tt::CBIndex::c_5;

    // The matrix unit takes in1 (the weight) in srcA and in0 in srcB.
    compute_kernel_hw_startup<SrcOrder::Reverse>(cb_in0, cb_in1, cb_partials);
    matmul_block_init(cb_in0, cb_in1, 0, sub_w, sub_h, in0_block_w);

    bool reload = false;  // this K block starts from partial sums the packer left in cb_partials
    for (uint32_t block = 0; block < num_k_blocks; ++block) {
        const bool last = block + 1 == num_k_blocks;
        cb_wait_front(cb_in0, in0_block_tiles);
        cb_wait_front(cb_in1, in1_block_tiles);
        uint32_t in0_offset = 0;
        for (uint32_t sr = 0; sr < in0_num_subblocks; ++sr) {
            uint32_t in1_offset = 0;
            for (uint32_t sc = 0; sc < in1_num_subblocks; ++sc) {
                tile_regs_acquire();
                if (reload) {
                    reconfig_data_format_srca(cb_in1, cb_partials);
                    copy_init(cb_partials);
                    cb_wait_front(cb_partials, sub_tiles);
                    copy_block(cb_partials, 0, 0, sub_tiles);
                    cb_pop_front(cb_partials, sub_tiles);
                    reconfig_data_format_srca(cb_partials, cb_in1);
                    matmul_block_init(cb_in0, cb_in1, 0, sub_w, sub_h, in0_block_w);
                } else if (last && (sr > 0 || sc > 0)) {
                    // the SFPU ran since the last matmul init
                    matmul_block_init(cb_in0, cb_in1, 0, sub_w, sub_h, in0_block_w);
                }
                for (uint32_t k = 0; k < in0_block_w; ++k) {
                    matmul_block(cb_in0, cb_in1, in0_offset + k, in1_offset + k * in1_block_w, 0, 0, sub_w, sub_h,
                                 in0_block_w);
                }
                if (last) {
                    swiglu_in_dst<sub_h, sub_w>();
                    tile_regs_commit();
                    cb_reserve_back(cb_out, out_sub_tiles);
                    tile_regs_wait();
                    pack_reconfig_data_format(cb_out);
#ifdef PACKER_L1_ACC
                    pack_reconfig_l1_acc(0);
#endif
                    pack_block(0, cb_out, out_sub_tiles);
                    tile_regs_release();
                    cb_push_back(cb_out, out_sub_tiles);
                } else {
                    tile_regs_commit();
                    cb_reserve_back(cb_partials, sub_tiles);
                    tile_regs_wait();
#ifdef PACKER_L1_ACC
                    // the first K block writes the partials, the later ones add to them in L1
                    if (block <= 1) {
                        pack_reconfig_l1_acc(block == 0 ? 0 : 1);
                    }
#endif
                    pack_block(0, cb_partials, sub_tiles);
                    tile_regs_release();
                    cb_push_back(cb_partials, sub_tiles);
                }
                in1_offset += sub_w;
            }
            in0_offset += in0_subblock_tiles;
        }
#ifdef PACKER_L1_ACC
        // Until the last two blocks the sums stay where the packer accumulates them: release the pages
        // unread so the next block packs onto them; the last block reloads the complete sums.
        if (block + 2 < num_k_blocks) {
            for (uint32_t i = 0; i < in0_num_subblocks * in1_num_subblocks; ++i) {
                cb_wait_front(cb_partials, sub_tiles);
                cb_pop_front(cb_partials, sub_tiles);
            }
        }
        reload = block + 2 == num_k_blocks;
#else
        reload = num_k_blocks > 1;
#endif
        cb_pop_front(cb_in0, in0_block_tiles);
        cb_pop_front(cb_in1, in1_block_tiles);
    }
}
