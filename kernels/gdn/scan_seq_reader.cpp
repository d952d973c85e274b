// GDN sequential pass, reader: for each (value head, block of value columns) unit it loads the
// initial state block once, then chunk by chunk the chunk's record written by the preparation pass
// (P, then T~ and -T^ interleaved; scan_prep_chunk.h), the chunk's q, k and v block tiles and the value
// head's gate vectors (gate_vectors.h).
//
// Unit u: value head hv = u / blocks, column block b = u % blocks (blocks = VT / VBT); q/k head
// hv / group. The record of (hv, chunk c), unit r = hv * chunks + c, starts at tile r * record_tiles.
// q/k/v are token-major [T, channels] tensors; token tiles past their end are zero.
// The state tensor is [HV * K, V] fp32: head hv's block is tiles (hv * KT + kt, b * VBT + j).
//
// Compile-time args: TensorAccessorArgs of the record tensor at 0, then of the state tensor, of the
// q/k/v tensors (one format), of the gate-vector tensor.
// Common runtime args: 0 records address, 1 gate-vector address, 2 initial state address, 3 q address,
//   4 k address, 5 v address, 6 chunks, 7 tiles per chunk (nt), 8 key tiles (KT), 9 value tiles (VT),
//   10 value tiles per block (VBT), 11 tiles per record, 12 tokens T, 13 q/k tensor width in tiles,
//   14 q first column tile, 15 k first column tile, 16 value heads per q/k head, 17 v tensor width in
//   tiles, 18 v first column tile, 19 gate-vector head tiles; with GDN_SEQ_PIPELINED (the pipelined
//   scan: one unit per core, its records sent into its L1 while it runs, scan_pipeline.h) 20 preparing
//   cores per value head, 21 record slots.
// Runtime args: 0 first unit, 1 number of units; with GDN_SEQ_PIPELINED (one unit) then the NoC x and y
//   of each of the head's preparing cores.
// CBs: c_0 T~ / -T^ pairs, c_2 q, c_3 P, c_4 k, c_5 gate vectors, c_6 initial state block, c_7 v block;
//   with GDN_SEQ_PIPELINED c_3 holds whole records (P, then the T~ / -T^ pairs) and c_0 is not used.
#include "api/dataflow/dataflow_api.h"
#include "gate_vectors.h"
#include "gdn_dataflow.h"
#include "scan_pipeline.h"

namespace {
constexpr uint32_t cb_t_pairs = tt::CBIndex::c_0;
constexpr uint32_t cb_q = tt::CBIndex::c_2;
constexpr uint32_t cb_p = tt::CBIndex::c_3;
constexpr uint32_t cb_k = tt::CBIndex::c_4;
constexpr uint32_t cb_vec = tt::CBIndex::c_5;
constexpr uint32_t cb_state_in = tt::CBIndex::c_6;
constexpr uint32_t cb_v = tt::CBIndex::c_7;

// rows x cols tiles, row r starting at first + r * row_stride, into cb (row-major).
template <typename Accessor>
void read_grid(uint32_t cb, const Accessor& tensor, uint32_t first, uint32_t rows, uint32_t cols, uint32_t row_stride) {
    const uint32_t tile_bytes = get_tile_size(cb);
    cb_reserve_back(cb, rows * cols);
    const uint32_t l1 = get_write_ptr(cb);
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < cols; ++c) {
            noc_async_read_page(first + r * row_stride + c, tensor, l1 + (r * cols + c) * tile_bytes);
        }
    }
    noc_async_read_barrier();
    cb_push_back(cb, rows * cols);
}

}  // namespace

void kernel_main() {
    const uint32_t records_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t gv_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t state_addr = get_common_arg_val<uint32_t>(2);
    const uint32_t q_addr = get_common_arg_val<uint32_t>(3);
    const uint32_t k_addr = get_common_arg_val<uint32_t>(4);
    const uint32_t v_addr = get_common_arg_val<uint32_t>(5);
    const uint32_t num_chunks = get_common_arg_val<uint32_t>(6);
    const uint32_t nt = get_common_arg_val<uint32_t>(7);
    const uint32_t key_tiles = get_common_arg_val<uint32_t>(8);
    const uint32_t value_tiles = get_common_arg_val<uint32_t>(9);
    const uint32_t block_tiles = get_common_arg_val<uint32_t>(10);
    const uint32_t record_tiles = get_common_arg_val<uint32_t>(11);
    const uint32_t tokens = get_common_arg_val<uint32_t>(12);
    const uint32_t qk_row_tiles = get_common_arg_val<uint32_t>(13);
    const uint32_t q_col0 = get_common_arg_val<uint32_t>(14);
    const uint32_t k_col0 = get_common_arg_val<uint32_t>(15);
    const uint32_t group = get_common_arg_val<uint32_t>(16);
    const uint32_t v_row_tiles = get_common_arg_val<uint32_t>(17);
    const uint32_t v_col0 = get_common_arg_val<uint32_t>(18);
    const uint32_t gv_head_tiles = get_common_arg_val<uint32_t>(19);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);
#ifdef GDN_SEQ_PIPELINED
    const uint32_t producers = get_common_arg_val<uint32_t>(20);  // preparing cores of each value head
    const uint32_t slots = get_common_arg_val<uint32_t>(21);      // records the record CB holds
    const uint32_t consumer = first_unit % (value_tiles / block_tiles);  // this core's index among the head's
    const uint32_t message = get_semaphore(producers);  // a word to send the record slot's address from
#endif

    constexpr auto record_args = TensorAccessorArgs<0>();
    constexpr auto state_args = TensorAccessorArgs<record_args.next_compile_time_args_offset()>();
    constexpr auto qkv_args = TensorAccessorArgs<state_args.next_compile_time_args_offset()>();
    constexpr auto gv_args = TensorAccessorArgs<qkv_args.next_compile_time_args_offset()>();
    const auto records = TensorAccessor(record_args, records_addr, get_tile_size(cb_p));
    const auto state = TensorAccessor(state_args, state_addr, get_tile_size(cb_state_in));
    const auto q = TensorAccessor(qkv_args, q_addr, get_tile_size(cb_q));
    const auto k = TensorAccessor(qkv_args, k_addr, get_tile_size(cb_k));
    const auto v = TensorAccessor(qkv_args, v_addr, get_tile_size(cb_v));
    const auto gv = TensorAccessor(gv_args, gv_addr, get_tile_size(cb_vec));
    const uint32_t ntri = nt * (nt + 1) / 2;
    const uint32_t blocks = value_tiles / block_tiles;
    const uint32_t token_tiles = (tokens + gdn::kTileDim - 1) / gdn::kTileDim;
    const uint32_t kinds = gdn::gv::kinds(nt);
    gdn::zero_cb_pages(cb_vec, 2 * kinds * nt);

    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t hv = u / blocks;
        const uint32_t hq = hv / group;
        const uint32_t col0 = (u % blocks) * block_tiles;
        read_grid(cb_state_in, state, hv * key_tiles * value_tiles + col0, key_tiles, block_tiles, value_tiles);
        for (uint32_t c = 0; c < num_chunks; ++c) {
            const uint32_t first_tt = c * nt;
#ifdef GDN_SEQ_PIPELINED
            // Pipelined scan: the record comes from producer j = c % producers straight into this core's
            // record slot (scan_pipeline.h). Announce the slot first, so the producer can write while k,
            // q, the gate vectors and v (what the compute kernel starts on) are read.
            const uint32_t j = c % producers, k_th = c / producers;
            const uint32_t px = get_arg_val<uint32_t>(2 + 2 * j), py = get_arg_val<uint32_t>(3 + 2 * j);
            cb_reserve_back(cb_p, record_tiles);
            *reinterpret_cast<volatile tt_l1_ptr uint32_t*>(message) = get_write_ptr(cb_p);
            noc_semaphore_set_remote(message,
                                     get_noc_addr(px, py, get_semaphore(gdn::pipeline::address_sem(consumer, k_th, slots))));
            noc_async_write_barrier();
            noc_semaphore_inc(get_noc_addr(px, py, get_semaphore(gdn::pipeline::free_sem(consumer, slots))), 1);
            cb_reserve_back(cb_k, nt * key_tiles);
            cb_reserve_back(cb_q, nt * key_tiles);
            cb_reserve_back(cb_v, nt * block_tiles);
            cb_reserve_back(cb_vec, kinds * nt);
            gdn::issue_head_block(get_write_ptr(cb_k), get_tile_size(cb_k), k, first_tt, nt, token_tiles, qk_row_tiles,
                                  k_col0 + hq * key_tiles, key_tiles);
            gdn::issue_head_block(get_write_ptr(cb_q), get_tile_size(cb_q), q, first_tt, nt, token_tiles, qk_row_tiles,
                                  q_col0 + hq * key_tiles, key_tiles);
            gdn::issue_head_block(get_write_ptr(cb_v), get_tile_size(cb_v), v, first_tt, nt, token_tiles, v_row_tiles,
                                  v_col0 + hv * value_tiles + col0, block_tiles);
            gdn::issue_gate_vectors(get_write_ptr(cb_vec), get_tile_size(cb_vec), gv, hv, first_tt, nt, kinds,
                                    gv_head_tiles, token_tiles);
            noc_async_read_barrier();
            cb_push_back(cb_k, nt * key_tiles);
            cb_push_back(cb_vec, kinds * nt);
            cb_push_back(cb_q, nt * key_tiles);
            cb_push_back(cb_v, nt * block_tiles);
            noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(j)), k_th + 1);
            cb_push_back(cb_p, record_tiles);
#else
            const uint32_t rec = (hv * num_chunks + c) * record_tiles;
            read_grid(cb_p, records, rec, 1, ntri, 0);
            read_grid(cb_t_pairs, records, rec + ntri, 1, 2 * ntri, 0);
            gdn::read_head_block(cb_k, k, first_tt, nt, token_tiles, qk_row_tiles, k_col0 + hq * key_tiles, key_tiles);
            gdn::read_head_block(cb_q, q, first_tt, nt, token_tiles, qk_row_tiles, q_col0 + hq * key_tiles, key_tiles);
            gdn::read_head_block(cb_v, v, first_tt, nt, token_tiles, v_row_tiles, v_col0 + hv * value_tiles + col0,
                            block_tiles);
            gdn::read_gate_vectors(cb_vec, gv, hv, first_tt, nt, kinds, gv_head_tiles, token_tiles);
#endif
        }
    }
}
