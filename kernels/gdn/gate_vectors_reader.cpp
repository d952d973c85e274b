// GDN gate vectors, reader: per unit (chunk c, 32-head column tile ht) the chunk's g and beta tiles
// ([T, HV] fp32 tensors, tokens along rows) with zero tiles past the tensors' end, and once the
// constant tiles (bf16): a zero tile and, when T is not a multiple of 32, the mask of the last token
// tile's valid rows.
//
// Compile-time args: TensorAccessorArgs of g/beta at 0.
// Common runtime args: 0 g address, 1 beta address, 2 tokens T, 3 tiles per chunk (nt), 4 head tiles (HT).
// Runtime args: 0 first unit, 1 number of units (unit u: chunk u / HT, head tile u % HT).
// CBs: c_0 g (nt), c_1 beta (nt), c_2 constants (2).
#include "api/dataflow/dataflow_api.h"
#include "gdn_dataflow.h"

void kernel_main() {
    constexpr uint32_t cb_g = tt::CBIndex::c_0;
    constexpr uint32_t cb_beta = tt::CBIndex::c_1;
    constexpr uint32_t cb_consts = tt::CBIndex::c_2;
    const uint32_t g_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t beta_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t tokens = get_common_arg_val<uint32_t>(2);
    const uint32_t nt = get_common_arg_val<uint32_t>(3);
    const uint32_t head_tiles = get_common_arg_val<uint32_t>(4);
    const uint32_t first = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);

    constexpr auto args = TensorAccessorArgs<0>();
    const auto g = TensorAccessor(args, g_addr, get_tile_size(cb_g));
    const auto beta = TensorAccessor(args, beta_addr, get_tile_size(cb_beta));
    const uint32_t token_tiles = (tokens + gdn::kTileDim - 1) / gdn::kTileDim;
    const uint32_t valid_last = tokens - (token_tiles - 1) * gdn::kTileDim;

    cb_reserve_back(cb_consts, 2);
    const uint32_t consts = get_write_ptr(cb_consts);
    const uint32_t const_bytes = get_tile_size(cb_consts);
    gdn::zero_tile(consts, const_bytes);
    gdn::write_bf16_pattern(consts + const_bytes, [valid_last](uint32_t r, uint32_t) { return r < valid_last; });
    cb_push_back(cb_consts, 2);

    for (uint32_t u = first; u < first + count; ++u) {
        const uint32_t first_tt = (u / head_tiles) * nt;
        gdn::read_head_block(cb_g, g, first_tt, nt, token_tiles, head_tiles, u % head_tiles, 1);
        gdn::read_head_block(cb_beta, beta, first_tt, nt, token_tiles, head_tiles, u % head_tiles, 1);
    }
}
