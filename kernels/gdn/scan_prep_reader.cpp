// GDN chunk preparation, reader: for each (value head, chunk) unit it loads the chunk's q, k (the
// unit's q/k head), in the fused scan also v, and the value head's gate vectors (gate_vectors.h).
//
// Work unit u: value head hv = u / num_chunks, chunk c = u % num_chunks; q/k head hv / group.
// q/k/v are token-major tensors [T, channels] (tile (token tile, channel tile)); a head's tiles start
// at a column offset. Token tiles past the tensor (the padding of a ragged last chunk) are zero tiles,
// and their gate vectors zero (no decay, no write).
//
// Compile-time args: TensorAccessorArgs of the q/k/v tensors (one format) at 0, then of the gate-vector
// tensor.
// Common runtime args:
//   0 q address   1 k address   2 v address   3 gate-vector address   4 gate-vector head tiles
//   5 tokens T    6 chunks      7 tiles per chunk (nt)       8 key tiles (KT)   9 value tiles (VT)
//   10 value heads per q/k head (group)
//   11 q/k tensor width in tiles  12 q first column tile  13 k first column tile
//   14 v tensor width in tiles    15 v first column tile
//   (fused mode) 16 initial state address, 17 / 18 offload numerator / denominator (scan_offload.h;
//   0 / 1 without helpers), 19 tiles per record; (helper mode) 17 / 18 the same.
// Runtime args: 0 first unit, 1 number of units; (fused mode) 2 / 3 the helper's NoC x / y, 4 this head's
//   index among the helper's heads. With helpers every head core has one head (helper_plan needs idle
//   cores), so the ready count below belongs to that head alone.
// With GDN_SCAN_FUSED defined (the fused scan, scan_seq_compute.cpp) a unit is a whole value head:
// its initial state [K, V] (fp32, rows hv * K.. of the [HV * K, V] state tensor, whose TensorAccessorArgs
// follow those of the gate vectors) into c_15, then every chunk's tiles in order, v included.
// With GDN_SCAN_HELPER defined (a helper core of the fused scan, scan_offload.h) the units are the
// offloaded chunks of its heads, chunk by chunk; with GDN_HELPER_SHARED_QK too, its heads share one q/k
// head, whose k and q come once per chunk before each head's gate vectors.
// With GDN_PREP_PIPELINED defined (a preparing core of the pipelined scan) the runtime args are 0 value
// head, 1 first chunk, 2 chunk stride: that head's chunks first, first + stride, ...
// CBs: c_0 k (nt*KT), c_1 q (nt*KT), c_2 v (nt*VT, fused mode), c_3 gate vectors, c_5 constant tiles
//      (written once), c_22 records from the helper (fused mode).
#include "api/dataflow/dataflow_api.h"
#include "gdn_dataflow.h"
#include "gate_vectors.h"
#include "scan_offload.h"
#include "scan_prep_consts.h"

namespace {
constexpr uint32_t cb_k = tt::CBIndex::c_0;
constexpr uint32_t cb_q = tt::CBIndex::c_1;
constexpr uint32_t cb_v = tt::CBIndex::c_2;
constexpr uint32_t cb_vec = tt::CBIndex::c_3;
constexpr uint32_t cb_consts = tt::CBIndex::c_5;
}  // namespace

void kernel_main() {
    const uint32_t q_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t k_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t v_addr = get_common_arg_val<uint32_t>(2);
    const uint32_t gv_addr = get_common_arg_val<uint32_t>(3);
    const uint32_t gv_head_tiles = get_common_arg_val<uint32_t>(4);
    const uint32_t tokens = get_common_arg_val<uint32_t>(5);
    const uint32_t num_chunks = get_common_arg_val<uint32_t>(6);
    const uint32_t nt = get_common_arg_val<uint32_t>(7);
    const uint32_t key_tiles = get_common_arg_val<uint32_t>(8);
    const uint32_t value_tiles = get_common_arg_val<uint32_t>(9);
    const uint32_t group = get_common_arg_val<uint32_t>(10);
    const uint32_t qk_row_tiles = get_common_arg_val<uint32_t>(11);
    const uint32_t q_col0 = get_common_arg_val<uint32_t>(12);
    const uint32_t k_col0 = get_common_arg_val<uint32_t>(13);
    const uint32_t v_row_tiles = get_common_arg_val<uint32_t>(14);
    const uint32_t v_col0 = get_common_arg_val<uint32_t>(15);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    constexpr auto qkv_args = TensorAccessorArgs<0>();
    constexpr auto gv_args = TensorAccessorArgs<qkv_args.next_compile_time_args_offset()>();
    const auto q = TensorAccessor(qkv_args, q_addr, get_tile_size(cb_q));
    const auto k = TensorAccessor(qkv_args, k_addr, get_tile_size(cb_k));
    const auto v = TensorAccessor(qkv_args, v_addr, get_tile_size(cb_q));  // v shares q's format; cb_v exists only when fused
    const auto gv = TensorAccessor(gv_args, gv_addr, get_tile_size(cb_vec));

    // Constant tiles, once: identity, triangular masks, and the masks of the inverse's doubling steps
    // (level l, block b = 2^l: the rows of each odd b-block against the columns of the b-block before it).
    cb_reserve_back(cb_consts, gdn::kNumConsts);
    {
        const uint32_t base = get_write_ptr(cb_consts);
        const uint32_t tb = get_tile_size(cb_consts);
        gdn::write_bf16_pattern(base + gdn::kConstIdentity * tb, [](uint32_t r, uint32_t c) { return r == c; });
        gdn::write_bf16_pattern(base + gdn::kConstStrictLower * tb, [](uint32_t r, uint32_t c) { return r > c; });
        gdn::write_bf16_pattern(base + gdn::kConstLowerIncl * tb, [](uint32_t r, uint32_t c) { return r >= c; });
        for (uint32_t level = 0; level < gdn::kInverseLevels; ++level) {
            const uint32_t b = 1u << level;
            gdn::write_bf16_pattern(base + (gdn::kConstLevelMask0 + level) * tb, [b](uint32_t r, uint32_t c) {
                return (r / b) == (c / b) + 1 && (c / b) % 2 == 0;
            });
        }
    }
    gdn::zero_tile(get_write_ptr(cb_consts) + gdn::kConstZero * get_tile_size(cb_consts), get_tile_size(cb_consts));
    cb_push_back(cb_consts, gdn::kNumConsts);

    const uint32_t token_tiles = (tokens + gdn::kTileDim - 1) / gdn::kTileDim;
    const uint32_t kinds = gdn::gv::kinds(nt);
    gdn::zero_cb_pages(cb_vec, 2 * kinds * nt);
#ifdef GDN_SCAN_FUSED
    constexpr bool read_v = true;  // the fused scan's sequential part reads v
#else
    constexpr bool read_v = false;
#endif

    // k and q of q/k head hq for a chunk; then what is a value head's own: v (fused) and its gate vectors.
    auto read_qk = [&](uint32_t hq, uint32_t chunk) {
        const uint32_t first_tt = chunk * nt;
        gdn::read_head_block(cb_k, k, first_tt, nt, token_tiles, qk_row_tiles, k_col0 + hq * key_tiles, key_tiles);
        gdn::read_head_block(cb_q, q, first_tt, nt, token_tiles, qk_row_tiles, q_col0 + hq * key_tiles, key_tiles);
    };
    auto read_head_inputs = [&](uint32_t hv, uint32_t chunk) {
        const uint32_t first_tt = chunk * nt;
        if (read_v) {
            gdn::read_head_block(cb_v, v, first_tt, nt, token_tiles, v_row_tiles, v_col0 + hv * value_tiles, value_tiles);
        }
        gdn::read_gate_vectors(cb_vec, gv, hv, first_tt, nt, kinds, gv_head_tiles, token_tiles);
    };
    auto read_chunk = [&](uint32_t hv, uint32_t chunk) {
        read_qk(hv / group, chunk);
        read_head_inputs(hv, chunk);
    };

#if defined(GDN_SCAN_FUSED)
    constexpr uint32_t cb_state_in = tt::CBIndex::c_15;
    constexpr uint32_t cb_record = tt::CBIndex::c_22;
    constexpr auto state_args = TensorAccessorArgs<gv_args.next_compile_time_args_offset()>();
    const auto state = TensorAccessor(state_args, get_common_arg_val<uint32_t>(16), get_tile_size(cb_state_in));
    const uint32_t offload_num = get_common_arg_val<uint32_t>(17);
    const uint32_t offload_den = get_common_arg_val<uint32_t>(18);
    const uint32_t record_tiles = get_common_arg_val<uint32_t>(19);
    const uint32_t helper_x = get_arg_val<uint32_t>(2);
    const uint32_t helper_y = get_arg_val<uint32_t>(3);
    const uint32_t local_head = get_arg_val<uint32_t>(4);
    const uint32_t ready_sem = get_semaphore(gdn::offload::kSemReady);
    const uint32_t message = get_semaphore(gdn::offload::kSemMessage);  // a word to send from
    const uint32_t state_tiles = key_tiles * value_tiles;
    for (uint32_t hv = first_unit; hv < first_unit + num_units; ++hv) {
        cb_reserve_back(cb_state_in, state_tiles);
        const uint32_t l1 = get_write_ptr(cb_state_in);
        for (uint32_t t = 0; t < state_tiles; ++t) {
            noc_async_read_page(hv * state_tiles + t, state, l1 + t * get_tile_size(cb_state_in));
        }
        noc_async_read_barrier();
        cb_push_back(cb_state_in, state_tiles);
        uint32_t records = 0;
        for (uint32_t c = 0; c < num_chunks; ++c) {
            const bool remote = offload_num && gdn::offload::offloaded(c, offload_num, offload_den);
            if (remote) {  // ask the helper for this chunk's record: a free slot and where it is
                cb_reserve_back(cb_record, record_tiles);
                const uint32_t slot = records % gdn::offload::kRecordSlots;
                const uint32_t addr_sem = get_semaphore(gdn::offload::kSemAddress +
                                                        local_head * gdn::offload::kRecordSlots + slot);
                *reinterpret_cast<volatile tt_l1_ptr uint32_t*>(message) = get_write_ptr(cb_record);
                noc_semaphore_set_remote(message, get_noc_addr(helper_x, helper_y, addr_sem));
                noc_async_write_barrier();
                noc_semaphore_inc(get_noc_addr(helper_x, helper_y, get_semaphore(gdn::offload::kSemFree + local_head)), 1);
            }
            read_chunk(hv, c);
            if (remote) {
                noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(ready_sem), ++records);
                cb_push_back(cb_record, record_tiles);
            }
        }
    }
#elif defined(GDN_SCAN_HELPER)
    // A helper of the fused scan: the offloaded chunks of value heads [first_unit, first_unit + num_units),
    // chunk by chunk, in the order its sender delivers them.
    const uint32_t offload_num = get_common_arg_val<uint32_t>(17);
    const uint32_t offload_den = get_common_arg_val<uint32_t>(18);
    for (uint32_t c = 0; c < num_chunks; ++c) {
        if (!gdn::offload::offloaded(c, offload_num, offload_den)) continue;
#ifdef GDN_HELPER_SHARED_QK
        // The heads share one q/k head: its k and q once, then each head's gate vectors.
        read_qk(first_unit / group, c);
        for (uint32_t hv = first_unit; hv < first_unit + num_units; ++hv) read_head_inputs(hv, c);
#else
        for (uint32_t hv = first_unit; hv < first_unit + num_units; ++hv) read_chunk(hv, c);
#endif
    }
#elif defined(GDN_PREP_PIPELINED)
    // A preparing core of the pipelined scan (scan_pipelined_program): one value head (runtime arg 0),
    // the chunks first, first + stride, ... (args 1 and 2), in order.
    const uint32_t hv = get_arg_val<uint32_t>(0);
    const uint32_t first_chunk = get_arg_val<uint32_t>(1);
    const uint32_t stride = get_arg_val<uint32_t>(2);
    for (uint32_t c = first_chunk; c < num_chunks; c += stride) read_chunk(hv, c);
#else
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) read_chunk(u / num_chunks, u % num_chunks);
#endif
}
