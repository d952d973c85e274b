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

constexpr uint32_t kAcc = 0;     // DST: the running conv sum
constexpr uint32_t kWeight = 1;  // DST: a tap weight
constexpr uint32_t kTap = 2;     // DST: one tap's shifted rows

// DST[kTap] = the rows `tap` steps of the conv reads (must be zero on entry).
void shifted_rows(uint32_t tap, uint32_t w) {
    gdn::matmul_start(cb_consts, cb_cur);
    matmul_tiles(cb_consts, cb_cur, gdn::kConstShiftCur0 + tap, w, kTap);
    gdn::matmul_start(cb_consts, cb_prev);
    matmul_tiles(cb_consts, cb_prev, gdn::kConstShiftPrev0 + tap, w, kTap);
}

// DST[kAcc] (or DST[kTap] with accumulate) += weight * DST[kTap].
void weigh_tap(uint32_t w, uint32_t tap, bool first) {
    gdn::copy_in(cb_weights, w * gdn::kConvWidth + tap, kWeight);
    gdn::mul_dst(kTap, kWeight, first ? kAcc : kTap);
    if (!first) gdn::add_dst(kAcc, kTap, kAcc);
}

// silu(conv) of channel tile w of the current token tile, left in DST[kAcc].
void conv_tile(uint32_t w) {
    shifted_rows(0, w);
    weigh_tap(w, 0, true);
    for (uint32_t tap = 1; tap < gdn::kConvShiftTaps; ++tap) {
        fill_tile_init();
        fill_tile(kTap, 0.0f);
        shifted_rows(tap, w);
        weigh_tap(w, tap, false);
    }
    gdn::copy_in(cb_cur, w, kTap);  // the last tap reads the current row itself
    weigh_tap(w, gdn::kConvShiftTaps, false);
    silu_tile_init();
    silu_tile(kAcc);
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
                gdn::pack_dst_push(cb_conv);
            }
            cb_pop_front(cb_prev, width);
            cb_pop_front(cb_cur, width);
            if (mode == gdn::kNormNone) continue;

            // Sum of squares over the head's tiles, element-wise, then along each row.
            cb_wait_front(cb_y, width);
            tile_regs_acquire();
            gdn::copy_in(cb_y, 0, 0);
            gdn::mul_dst(0, 0, 0);
            for (uint32_t w = 1; w < width; ++w) {
                gdn::copy_in(cb_y, w, 1);
                gdn::mul_dst(1, 1, 1);
                gdn::add_dst(0, 1, 0);
            }
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
            cb_wait_front(cb_rs, 1);
            for (uint32_t w = 0; w < width; ++w) {
                tile_regs_acquire();
                gdn::copy_in(cb_y, w, 0);
                gdn::copy_in(cb_rs, 0, 1);
                gdn::mul_dst(0, 1, 0);
                gdn::pack_dst_push(cb_out);
            }
            cb_pop_front(cb_rs, 1);
            cb_pop_front(cb_y, width);
        }
        cb_pop_front(cb_weights, gdn::kConvWidth * width);
    }
}
