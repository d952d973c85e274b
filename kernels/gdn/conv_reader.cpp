// GDN causal conv1d, reader: token tiles of the pre-conv qkv channels with the tile before each, the
// tap weights, the shift matrices, and the new conv state.
//
// For each token tile tt of a unit it pushes the unit's `width` channel tiles of tt ("cur") and of
// the token tile before ("prev"). Before the first token the previous rows are the conv state: the
// prev tile of tt = 0 is zero except rows 29..31, which hold the 3 state rows (oldest first), so
// "row i + tap - 3 of the concatenation prev|cur" is the conv's input for tap `tap` in every case.
// Later prev tiles are copies of the last cur tiles (L1 to L1), the first of a unit is read again.
// When a unit reaches the last token tile it also assembles the new conv state: rows 0..2 are the
// sequence rows T-3..T-1 of the same concatenation (so a sequence shorter than 3 keeps old state rows).
// All of this moves bits; nothing is rounded.
//
// Compile-time args: TensorAccessorArgs of x (and of the conv states, same format) at 0, then of the
// tap weights (fp32).
// Common runtime args: 0 x address, 1 conv state address, 2 tap weight address, 3 tokens T,
//   4 channel tiles of x.
// Runtime args: 0 number of units, then per unit 5 values: first channel tile, width (tiles), first
//   token tile, end token tile, norm mode (unused here).
// CBs: c_0 cur tiles, c_1 prev tiles, c_2 tap weights (4 per channel tile, fp32), c_3 constants
//      (conv_consts.h), c_4 state scratch, c_5 carried cur tiles (this kernel only), c_17 new conv state.
#include "api/dataflow/dataflow_api.h"
#include "conv_consts.h"
#include "gdn_dataflow.h"

namespace {
constexpr uint32_t cb_cur = tt::CBIndex::c_0;
constexpr uint32_t cb_prev = tt::CBIndex::c_1;
constexpr uint32_t cb_weights = tt::CBIndex::c_2;
constexpr uint32_t cb_consts = tt::CBIndex::c_3;
constexpr uint32_t cb_scratch = tt::CBIndex::c_4;
constexpr uint32_t cb_carry = tt::CBIndex::c_5;
constexpr uint32_t cb_state_out = tt::CBIndex::c_17;

// The conv's previous rows sit at the bottom of the prev tile.
constexpr uint32_t kPrevFirstStateRow = gdn::kTileDim - gdn::kConvStateRows;

void local_copy(uint32_t dst, uint32_t src, uint32_t bytes) { noc_async_read(get_noc_addr(src), dst, bytes); }
}  // namespace

void kernel_main() {
    const uint32_t x_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t state_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t weight_addr = get_common_arg_val<uint32_t>(2);
    const uint32_t tokens = get_common_arg_val<uint32_t>(3);
    const uint32_t channel_tiles = get_common_arg_val<uint32_t>(4);
    const uint32_t num_units = get_arg_val<uint32_t>(0);

    constexpr auto x_args = TensorAccessorArgs<0>();
    constexpr auto w_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
    const uint32_t tile_bytes = get_tile_size(cb_cur);
    const auto x = TensorAccessor(x_args, x_addr, tile_bytes);
    const auto state = TensorAccessor(x_args, state_addr, tile_bytes);
    const auto weights = TensorAccessor(w_args, weight_addr, get_tile_size(cb_weights));
    const uint32_t element_bytes = tile_bytes / gdn::kTileElems;
    const uint32_t token_tiles = (tokens + gdn::kTileDim - 1) / gdn::kTileDim;

    // Shift matrices (left factors picking row i + tap - 3 of prev|cur) and a ones tile.
    cb_reserve_back(cb_consts, gdn::kConvNumConsts);
    {
        const uint32_t base = get_write_ptr(cb_consts);
        const uint32_t tb = get_tile_size(cb_consts);
        for (uint32_t tap = 0; tap < gdn::kConvShiftTaps; ++tap) {
            const uint32_t back = gdn::kConvStateRows - tap;  // rows back from the current token
            gdn::write_bf16_pattern(base + (gdn::kConstShiftCur0 + tap) * tb,
                                    [back](uint32_t i, uint32_t m) { return i >= back && m == i - back; });
            gdn::write_bf16_pattern(base + (gdn::kConstShiftPrev0 + tap) * tb, [back](uint32_t i, uint32_t m) {
                return i < back && m == gdn::kTileDim + i - back;
            });
        }
        gdn::write_bf16_pattern(base + gdn::kConstOnes * tb, [](uint32_t, uint32_t) { return true; });
    }
    cb_push_back(cb_consts, gdn::kConvNumConsts);
    cb_reserve_back(cb_scratch, 1);
    const uint32_t scratch = get_write_ptr(cb_scratch);

    for (uint32_t unit = 0; unit < num_units; ++unit) {
        const uint32_t col0 = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitFirstChannelTile));
        const uint32_t width = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitWidth));
        const uint32_t tt_begin = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitFirstTokenTile));
        const uint32_t tt_end = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitEndTokenTile));

        {  // tap weights of the unit's channels: tile (tap, channel tile) of the [4 * 32, C] weight rows
            const uint32_t wb = get_tile_size(cb_weights);
            cb_reserve_back(cb_weights, gdn::kConvWidth * width);
            const uint32_t l1 = get_write_ptr(cb_weights);
            for (uint32_t w = 0; w < width; ++w) {
                for (uint32_t tap = 0; tap < gdn::kConvWidth; ++tap) {
                    noc_async_read_page(tap * channel_tiles + col0 + w, weights, l1 + (w * gdn::kConvWidth + tap) * wb);
                }
            }
            noc_async_read_barrier();
            cb_push_back(cb_weights, gdn::kConvWidth * width);
        }

        cb_reserve_back(cb_carry, width);
        const uint32_t carry = get_write_ptr(cb_carry);
        for (uint32_t tt = tt_begin; tt < tt_end; ++tt) {
            cb_reserve_back(cb_prev, width);
            cb_reserve_back(cb_cur, width);
            const uint32_t prev = get_write_ptr(cb_prev);
            const uint32_t cur = get_write_ptr(cb_cur);
            for (uint32_t w = 0; w < width; ++w) {
                const uint32_t p = prev + w * tile_bytes;
                if (tt == 0) {
                    noc_async_read_page(col0 + w, state, scratch);
                    noc_async_read_barrier();
                    gdn::zero_tile(p, tile_bytes);
                    for (uint32_t r = 0; r < gdn::kConvStateRows; ++r) {
                        gdn::copy_row(p, kPrevFirstStateRow + r, scratch, r, element_bytes);
                    }
                } else if (tt == tt_begin) {
                    noc_async_read_page((tt - 1) * channel_tiles + col0 + w, x, p);
                } else {
                    local_copy(p, carry + w * tile_bytes, tile_bytes);
                }
                noc_async_read_page(tt * channel_tiles + col0 + w, x, cur + w * tile_bytes);
            }
            noc_async_read_barrier();
            if (tt + 1 < tt_end) {
                for (uint32_t w = 0; w < width; ++w) {
                    local_copy(carry + w * tile_bytes, cur + w * tile_bytes, tile_bytes);
                }
                noc_async_read_barrier();
            }
            if (tt + 1 == token_tiles) {
                // New conv state: sequence rows T-3..T-1 from prev|cur (negative rows: old state rows).
                cb_reserve_back(cb_state_out, width);
                const uint32_t out = get_write_ptr(cb_state_out);
                const int32_t base = int32_t(tt * gdn::kTileDim);
                for (uint32_t w = 0; w < width; ++w) {
                    const uint32_t o = out + w * tile_bytes;
                    gdn::zero_tile(o, tile_bytes);
                    for (uint32_t r = 0; r < gdn::kConvStateRows; ++r) {
                        const int32_t row = int32_t(tokens) - int32_t(gdn::kConvStateRows) + int32_t(r) - base;
                        if (row >= 0) {
                            gdn::copy_row(o, r, cur + w * tile_bytes, uint32_t(row), element_bytes);
                        } else {
                            const uint32_t prev_row = uint32_t(row + int32_t(gdn::kTileDim));
                            gdn::copy_row(o, r, prev + w * tile_bytes, prev_row, element_bytes);
                        }
                    }
                }
                cb_push_back(cb_state_out, width);
            }
            cb_push_back(cb_prev, width);
            cb_push_back(cb_cur, width);
        }
    }
}
