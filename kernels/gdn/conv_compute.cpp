// GDN causal conv1d + SiLU, fused with the L2 normalisation (and scaling) of q and k heads.
//
// Per channel tile of a token tile:
//     y = silu( sum_{tap < 3} w_tap * (Scur_tap @ cur + Sprev_tap @ prev) + w_3 * cur )
// The shift matmuls pick one bf16 value per output element (0/1 left factor, fp32 accumulation):
// exact. The tap weights (row broadcast tiles, fp32) multiply on the SFPU and the taps add there, in
// fp32. For q/k heads (mode kNormL2, kNormL2Scaled) the head's `width` tiles of y are kept (fp32), their
// squares summed on the SFPU, and (sum of squares) @ ones gives every row's sum in every column (a
// column broadcast; fp32 accumulation of TF32 operands); then rs = rsqrt(sum + eps) (times the q
// scale) multiplies y on the SFPU.
//
// Compile-time args: none.
// Common runtime args: 0 eps (fp32 bits), 1 q scale (fp32 bits).
// Runtime args: 0 number of units, then per unit 5 values: first channel tile, width (tiles), first
//   token tile, end token tile, norm mode (conv_consts.h).
// CBs: c_0 cur tiles, c_1 prev tiles, c_2 tap weights, c_3 constants; c_24 y (fp32), c_25 sum of
//      squares (fp32), c_26 rs (fp32); output c_16 conv output (bf16).
#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/eltwise_unary/rsqrt.h"
#include "conv_consts.h"
#include "gdn_compute.h"

namespace {
constexpr uint32_t cb_cur = tt::CBIndex::c_0;
constexpr uint32_t cb_prev = tt::CBIndex::c_1;
constexpr uint32_t cb_weights = tt::CBIndex::c_2;
constexpr uint32_t cb_consts = tt::CBIndex::c_3;
constexpr uint32_t cb_out = tt::CBIndex::c_16;
constexpr uint32_t cb_y = tt::CBIndex::c_24;
constexpr uint32_t cb_sq = tt::CBIndex::c_25;
constexpr uint32_t cb_rs = tt::CBIndex::c_26;

// The conv of one tile, ordered so that each FPU and SFPU set-up serves several calls (an init or a
// reconfig per call would cost more than the arithmetic): the three shifted taps by matmuls into
// DST[kTap0 ..], their weights one after the other through DST[kWeight], then the current row's tap.
// The sum is formed in the order ((w0 t0 + w1 t1) + w2 t2) + w3 cur, in fp32.
constexpr uint32_t kWeight = 0;  // DST: a tap weight
constexpr uint32_t kTap0 = 1;    // DST: kTap0 + tap holds the rows `tap` steps back; kTap0 ends as the sum
constexpr uint32_t kCur = 2;     // DST: the current rows (after taps 1 and 2 have been added)

// silu(conv) of channel tile w of the current token tile, left in DST[kTap0]. DST must be zero on entry.
void conv_tile(uint32_t w) {
    gdn::matmul_start(cb_consts, cb_cur);
    for (uint32_t tap = 0; tap < gdn::kConvShiftTaps; ++tap) {
        matmul_tiles(cb_consts, cb_cur, gdn::kConstShiftCur0 + tap, w, kTap0 + tap);
        matmul_tiles(cb_consts, cb_prev, gdn::kConstShiftPrev0 + tap, w, kTap0 + tap);
    }
    reconfig_data_format_srca(cb_weights);
    copy_init(cb_weights);
    for (uint32_t tap = 0; tap < gdn::kConvShiftTaps; ++tap) {
        copy_tile(cb_weights, w * gdn::kConvWidth + tap, kWeight);
        if (tap == 0) mul_binary_tile_init();
        mul_binary_tile(kTap0 + tap, kWeight, kTap0 + tap);
    }
    add_binary_tile_init();
    for (uint32_t tap = 1; tap < gdn::kConvShiftTaps; ++tap) add_binary_tile(kTap0, kTap0 + tap, kTap0);
    copy_tile(cb_weights, w * gdn::kConvWidth + gdn::kConvShiftTaps, kWeight);
    gdn::copy_in(cb_cur, w, kCur);  // the last tap reads the current row itself
    gdn::mul_dst(kCur, kWeight, kCur);
    gdn::add_dst(kTap0, kCur, kTap0);
    silu_tile_init();
    silu_tile(kTap0);
}

// Hand DST to the packer and pack DST[kTap0] into cb, one page.
void pack_sum_push(uint32_t cb) {
    tile_regs_commit();
    tile_regs_wait();
    pack_reconfig_data_format(cb);
    cb_reserve_back(cb, 1);
    pack_tile(kTap0, cb);
    cb_push_back(cb, 1);
    tile_regs_release();
}
}  // namespace

void kernel_main() {
    const uint32_t eps_bits = get_common_arg_val<uint32_t>(0);
    const uint32_t scale_bits = get_common_arg_val<uint32_t>(1);
    const uint32_t num_units = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(cb_consts, cb_cur, cb_out);
    cb_wait_front(cb_consts, gdn::kConvNumConsts);

    for (uint32_t unit = 0; unit < num_units; ++unit) {
        const uint32_t width = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitWidth));
        const uint32_t tt_begin = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitFirstTokenTile));
        const uint32_t tt_end = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitEndTokenTile));
        const uint32_t mode = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitNormMode));
        cb_wait_front(cb_weights, gdn::kConvWidth * width);

        for (uint32_t tt = tt_begin; tt < tt_end; ++tt) {
            cb_wait_front(cb_prev, width);
            cb_wait_front(cb_cur, width);
            const uint32_t cb_conv = mode == gdn::kNormNone ? cb_out : cb_y;
            for (uint32_t w = 0; w < width; ++w) {
                tile_regs_acquire();
                conv_tile(w);
                pack_sum_push(cb_conv);
            }
            cb_pop_front(cb_prev, width);
            cb_pop_front(cb_cur, width);
            if (mode == gdn::kNormNone) continue;

            // Sum of squares over the head's tiles, element-wise, then along each row: the tiles side
            // by side in DST (a q/k head's key tiles fit it: key dims up to 128), each set-up once,
            // summed in the order ((y0^2 + y1^2) + y2^2) + y3^2.
            cb_wait_front(cb_y, width);
            tile_regs_acquire();
            reconfig_data_format_srca(cb_y);
            copy_init(cb_y);
            for (uint32_t w = 0; w < width; ++w) copy_tile(cb_y, w, w);
            mul_binary_tile_init();
            for (uint32_t w = 0; w < width; ++w) mul_binary_tile(w, w, w);
            add_binary_tile_init();
            for (uint32_t w = 1; w < width; ++w) add_binary_tile(0, w, 0);
            gdn::pack_dst_push(cb_sq);
            cb_wait_front(cb_sq, 1);
            tile_regs_acquire();
            gdn::matmul_start(cb_sq, cb_consts);
            matmul_tiles(cb_sq, cb_consts, 0, gdn::kConstOnes, 0);
            fill_tile_init();
            fill_tile_bitcast(1, eps_bits);
            gdn::add_dst(0, 1, 0);
            rsqrt_tile_init();
            rsqrt_tile(0);
            if (mode == gdn::kNormL2Scaled) {
                binop_with_scalar_tile_init();
                mul_unary_tile(0, scale_bits);
            }
            gdn::pack_dst_push(cb_rs);
            cb_pop_front(cb_sq, 1);
            // y * rs, up to kDstTiles - 1 tiles of y a DST acquisition beside one copy of rs.
            cb_wait_front(cb_rs, 1);
            for (uint32_t w0 = 0; w0 < width; w0 += gdn::kDstTiles - 1) {
                const uint32_t n = width - w0 < gdn::kDstTiles - 1 ? width - w0 : gdn::kDstTiles - 1;
                tile_regs_acquire();
                reconfig_data_format_srca(cb_y);
                copy_init(cb_y);
                for (uint32_t i = 0; i < n; ++i) copy_tile(cb_y, w0 + i, i);
                copy_tile(cb_rs, 0, n);
                mul_binary_tile_init();
                for (uint32_t i = 0; i < n; ++i) mul_binary_tile(i, n, i);
                gdn::pack_dst_push(cb_out, n);
            }
            cb_pop_front(cb_rs, 1);
            cb_pop_front(cb_y, width);
        }
        cb_pop_front(cb_weights, gdn::kConvWidth * width);
    }
}
