// GDN sequential pass, writer: the outputs O of each unit's value columns, chunk by chunk, into the
// token-major output tensor; the state block at each checkpoint and at the end.
//
// O of (value head hv, block b, chunk c) is nt x VBT tiles; token tile c * nt + i goes to tile
// (c * nt + i, o_col0 + hv * VT + b * VBT + j) of the output, and is dropped past the tensor's last
// token tile (the padding of a ragged last chunk). State blocks go to tile (hv * KT + kt, b * VBT + j)
// of the [HV * K, V] final-state tensor, or of slice s of the [checkpoints * HV * K, V] checkpoint
// tensor.
//
// Compile-time args: TensorAccessorArgs of the output at 0, then of the state tensors (fp32).
// Common runtime args: 0 output address, 1 final state address, 2 checkpoint tensor address,
//   3 chunks, 4 tiles per chunk (nt), 5 key tiles (KT), 6 value tiles (VT), 7 value tiles per block
//   (VBT), 8 value heads (HV), 9 output token tiles, 10 output width in tiles, 11 output first column
//   tile, 12 number of checkpoints, 13.. the chunk index after which each checkpoint is taken.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_16 O tiles, c_17 state blocks.
#include "api/dataflow/dataflow_api.h"

namespace {
constexpr uint32_t cb_o = tt::CBIndex::c_16;
constexpr uint32_t cb_state_out = tt::CBIndex::c_17;
// Common runtime arg holding the first checkpoint's chunk index.
constexpr uint32_t kFirstCheckpointArg = 13;

template <typename Accessor>
void write_state_block(const Accessor& tensor, uint32_t first_row_tile, uint32_t key_tiles,
                       uint32_t value_tiles, uint32_t col0, uint32_t block_tiles) {
    for (uint32_t kt = 0; kt < key_tiles; ++kt) {
        for (uint32_t j = 0; j < block_tiles; ++j) {
            cb_wait_front(cb_state_out, 1);
            noc_async_write_page((first_row_tile + kt) * value_tiles + col0 + j, tensor, get_read_ptr(cb_state_out));
            noc_async_writes_flushed();
            cb_pop_front(cb_state_out, 1);
        }
    }
}
}  // namespace

void kernel_main() {
    const uint32_t out_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t final_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t checkpoint_addr = get_common_arg_val<uint32_t>(2);
    const uint32_t num_chunks = get_common_arg_val<uint32_t>(3);
    const uint32_t nt = get_common_arg_val<uint32_t>(4);
    const uint32_t key_tiles = get_common_arg_val<uint32_t>(5);
    const uint32_t value_tiles = get_common_arg_val<uint32_t>(6);
    const uint32_t block_tiles = get_common_arg_val<uint32_t>(7);
    const uint32_t value_heads = get_common_arg_val<uint32_t>(8);
    const uint32_t out_token_tiles = get_common_arg_val<uint32_t>(9);
    const uint32_t out_row_tiles = get_common_arg_val<uint32_t>(10);
    const uint32_t out_col0 = get_common_arg_val<uint32_t>(11);
    const uint32_t num_checkpoints = get_common_arg_val<uint32_t>(12);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    constexpr auto out_args = TensorAccessorArgs<0>();
    constexpr auto state_args = TensorAccessorArgs<out_args.next_compile_time_args_offset()>();
    const auto out = TensorAccessor(out_args, out_addr, get_tile_size(cb_o));
    const auto final_state = TensorAccessor(state_args, final_addr, get_tile_size(cb_state_out));
    const auto checkpoints = TensorAccessor(state_args, checkpoint_addr, get_tile_size(cb_state_out));
    const uint32_t blocks = value_tiles / block_tiles;

    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t hv = u / blocks;
        const uint32_t col0 = (u % blocks) * block_tiles;
        uint32_t next_checkpoint = 0;
        for (uint32_t c = 0; c < num_chunks; ++c) {
            for (uint32_t i = 0; i < nt; ++i) {
                const uint32_t tt = c * nt + i;
                for (uint32_t j = 0; j < block_tiles; ++j) {
                    cb_wait_front(cb_o, 1);
                    if (tt < out_token_tiles) {
                        const uint32_t tile = tt * out_row_tiles + out_col0 + hv * value_tiles + col0 + j;
                        noc_async_write_page(tile, out, get_read_ptr(cb_o));
                        noc_async_writes_flushed();
                    }
                    cb_pop_front(cb_o, 1);
                }
            }
            const bool checkpoint = next_checkpoint < num_checkpoints &&
                                    get_common_arg_val<uint32_t>(kFirstCheckpointArg + next_checkpoint) == c;
            if (checkpoint) {
                const uint32_t slice_row = (next_checkpoint * value_heads + hv) * key_tiles;
                write_state_block(checkpoints, slice_row, key_tiles, value_tiles, col0, block_tiles);
                ++next_checkpoint;
            }
        }
        write_state_block(final_state, hv * key_tiles, key_tiles, value_tiles, col0, block_tiles);
    }
    noc_async_write_barrier();
}
