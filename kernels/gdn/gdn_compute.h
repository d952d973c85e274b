// Helpers shared by the GDN compute kernels. Each wraps one step with the unpacker/packer format
// reconfiguration it needs, because the GDN kernels move tiles between bf16 and fp32 circular
// buffers all the time, and the FPU/SFPU init that the step requires.
//
// Precision notes the kernels rely on (fp32_dest_acc_en is always on):
//  * copy_tile and transpose_tile of an fp32 tile into DST are exact for the CBs the programs put
//    in UnpackToDestFp32 mode (ttprefill/ops/gdn.py, _unpack_copies_to_dest); from any other fp32 CB
//    the tile passes through srcA as TF32;
//  * SFPU operations work on DST in fp32, so element-wise products, differences and exps of
//    DST tiles are fp32 accurate;
//  * FPU operands (matmul, eltwise FPU ops) pass through srcA/srcB, which hold TF32: fp32 tiles lose
//    their low mantissa bits there. Matmuls accumulate in fp32 DST.
#pragma once

#include <cstdint>

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/negative.h"
#include "api/compute/mask.h"
#include "api/compute/matmul.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/transpose.h"

namespace gdn {

// DST tiles one tile_regs_acquire provides with fp32 accumulation.
constexpr uint32_t kDstTiles = 4;

// Tile (I, J), J <= I, of a lower block triangle stored row by row: the order of the chunk records'
// P, T~ and -T^ (scan_prep_chunk.h writes them, scan_seq_compute.cpp reads them).
inline uint32_t tri(uint32_t i, uint32_t j) { return i * (i + 1) / 2 + j; }

// DST[dst] = tile `tile` of cb (exact).
ALWI void copy_in(uint32_t cb, uint32_t tile, uint32_t dst) {
    reconfig_data_format_srca(cb);
    copy_init(cb);
    copy_tile(cb, tile, dst);
}

// DST[dst] = transpose of tile `tile` of cb (exact).
ALWI void transpose_in(uint32_t cb, uint32_t tile, uint32_t dst) {
    reconfig_data_format_srca(cb);
    transpose_init(cb);
    transpose_tile(cb, tile, dst);
}

// Configure the FPU for in0 @ in1 (in1 transposed tile by tile when transpose_in1). in1 feeds srcA,
// in0 srcB.
ALWI void matmul_start(uint32_t cb_in0, uint32_t cb_in1, uint32_t transpose_in1 = 0) {
    reconfig_data_format(cb_in1, cb_in0);
    matmul_init(cb_in0, cb_in1, transpose_in1);
}

// DST[dst .. dst + width) += in0 tile @ in1 tiles in1_first .. in1_first + width (one k step of a
// 1 x width block).
ALWI void matmul_row(uint32_t cb_in0, uint32_t cb_in1, uint32_t in0_tile, uint32_t in1_first, uint32_t dst,
                     uint32_t width) {
    matmul_block(cb_in0, cb_in1, in0_tile, in1_first, dst, 0, width, 1, 1);
}

ALWI void mul_dst(uint32_t a, uint32_t b, uint32_t out) {
    mul_binary_tile_init();
    mul_binary_tile(a, b, out);
}

ALWI void sub_dst(uint32_t a, uint32_t b, uint32_t out) {
    sub_binary_tile_init();
    sub_binary_tile(a, b, out);
}

ALWI void add_dst(uint32_t a, uint32_t b, uint32_t out) {
    add_binary_tile_init();
    add_binary_tile(a, b, out);
}

ALWI void exp_dst(uint32_t dst) {
    exp_tile_init();
    exp_tile(dst);
}

ALWI void negate_dst(uint32_t dst) {
    negative_tile_init();
    negative_tile(dst);
}

// DST[data] = 0 where the mask tile is 0. The mask has to sit in DST[data + 1]: the device's
// mask_tile reads the tile after the data tile whatever index it is given.
ALWI void mask_dst(uint32_t data, uint32_t cb_masks, uint32_t mask_tile_index) {
    copy_in(cb_masks, mask_tile_index, data + 1);
    mask_tile_init();
    mask_tile(data, data + 1);
}

// Hand DST to the packer and pack DST[0 .. count) into cb, one page reserved and pushed per tile
// (single-page pushes never run past a CB's end, whatever mix of block sizes a CB sees).
ALWI void pack_dst_push(uint32_t cb, uint32_t count = 1) {
    tile_regs_commit();
    tile_regs_wait();
    pack_reconfig_data_format(cb);
    for (uint32_t i = 0; i < count; ++i) {
        cb_reserve_back(cb, 1);
        pack_tile(i, cb);
        cb_push_back(cb, 1);
    }
    tile_regs_release();
}

// As pack_dst_push for DST[0] alone, with exp applied to it on the pack thread first: the SFPU's exp
// then overlaps whatever FPU work the math thread does next instead of holding it up.
ALWI void pack_exp_push(uint32_t cb) {
    tile_regs_commit();
    tile_regs_wait();
    exp_packthread_tile_init();
    exp_packthread_tile(0);
    pack_reconfig_data_format(cb);
    cb_reserve_back(cb, 1);
    pack_tile(0, cb);
    cb_push_back(cb, 1);
    tile_regs_release();
}

// Hand DST to the packer and pack DST[0] into cb0 and DST[1] into cb1, one page each (the CBs may
// differ in format).
ALWI void pack_pair_push(uint32_t cb0, uint32_t cb1) {
    tile_regs_commit();
    tile_regs_wait();
    const uint32_t cbs[2] = {cb0, cb1};
    for (uint32_t i = 0; i < 2; ++i) {
        pack_reconfig_data_format(cbs[i]);
        cb_reserve_back(cbs[i], 1);
        pack_tile(i, cbs[i]);
        cb_push_back(cbs[i], 1);
    }
    tile_regs_release();
}

}  // namespace gdn
