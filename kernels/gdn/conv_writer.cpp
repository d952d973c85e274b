// GDN causal conv1d, writer: the conv output tiles of each unit into the token-major output tensor,
// and the new conv state tiles of units that reach the last token tile.
//
// Compile-time args: TensorAccessorArgs of the output (and of the conv state out, same format) at 0.
// Common runtime args: 0 output address, 1 new conv state address, 2 tokens T, 3 channel tiles.
// Runtime args: 0 number of units, then per unit 5 values: first channel tile, width (tiles), first
//   token tile, end token tile, norm mode (unused here).
// CBs: c_16 conv output, c_17 new conv state.
#include "api/dataflow/dataflow_api.h"
#include "conv_consts.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    constexpr uint32_t cb_state_out = tt::CBIndex::c_17;
    constexpr uint32_t tile_dim = 32;
    const uint32_t out_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t state_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t tokens = get_common_arg_val<uint32_t>(2);
    const uint32_t channel_tiles = get_common_arg_val<uint32_t>(3);
    const uint32_t num_units = get_arg_val<uint32_t>(0);

    constexpr auto out_args = TensorAccessorArgs<0>();
    const auto out = TensorAccessor(out_args, out_addr, get_tile_size(cb_out));
    const auto state = TensorAccessor(out_args, state_addr, get_tile_size(cb_state_out));
    const uint32_t token_tiles = (tokens + tile_dim - 1) / tile_dim;

    for (uint32_t unit = 0; unit < num_units; ++unit) {
        const uint32_t col0 = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitFirstChannelTile));
        const uint32_t width = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitWidth));
        const uint32_t tt_begin = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitFirstTokenTile));
        const uint32_t tt_end = get_arg_val<uint32_t>(gdn::conv_unit_arg(unit, gdn::kUnitEndTokenTile));
        for (uint32_t tt = tt_begin; tt < tt_end; ++tt) {
            for (uint32_t w = 0; w < width; ++w) {
                cb_wait_front(cb_out, 1);
                noc_async_write_page(tt * channel_tiles + col0 + w, out, get_read_ptr(cb_out));
                noc_async_writes_flushed();
                cb_pop_front(cb_out, 1);
            }
            if (tt + 1 == token_tiles) {
                for (uint32_t w = 0; w < width; ++w) {
                    cb_wait_front(cb_state_out, 1);
                    noc_async_write_page(col0 + w, state, get_read_ptr(cb_state_out));
                    noc_async_writes_flushed();
                    cb_pop_front(cb_state_out, 1);
                }
            }
        }
    }
    noc_async_write_barrier();
}
