// Flash-attention reader: Q blocks, and K/V blocks gathered from the paged cache through the page table.
//
// Compile-time args:
//   0 Dt          head_dim / 32
//   1 Bk          key tiles per key block
//   2 group       query heads per kv head (GQA)
//   3 hpu         query heads per unit (divides group)
//   4 page_tiles  key tiles per cache page (page_tokens / 32)
//   5 kv_heads    kv heads in the cache (a page holds all of them)
//   6 table_tiles UInt32 tiles of the page table tensor
//   7..           TensorAccessorArgs of Q, then the K pool, the V pool, the page table
// Runtime args:
//   0 Q address, 1 K pool address, 2 V pool address, 3 page table address,
//   4 p0 (absolute position of the first query), 5 sq (valid query rows),
//   6 query tile-rows per head in the Q tensor, 7 Bq (query tile-rows per head in a unit),
//   8 K/V sharing role (kv_share.h: alone, sender, receiver), 9 receivers (sender), 10..13 the receivers'
//   multicast rectangle (sender), 14, 15 the sender's NoC coordinates (receiver), 16, 17 semaphore ids
//   "ready" and "valid", 18 number of units N, 19.. the units ((head group << 16) | query block), then N
//   key-tile counts: the key tiles streamed for each unit (its own, or more: a sharing group streams
//   the most any of its units needs, and compute drops the blocks past its own)
// Circular buffers:
//   cb_q     <- R x Dt Q tiles per unit (row rho = query head hg * hpu + rho / Bq, tile-row b * Bq + rho % Bq)
//   cb_k     <- Dt x Bk K tiles per key block, K tile (key tile j, dim tile d) at slot d * Bk + j, so that
//               matmul_block with a transposing init reads K^T in row-major order
//   cb_v     <- Bk x Dt V tiles per key block, at slot j * Dt + d
//   cb_mask  <- the three causal mask tiles, generated once
//   cb_table    the page table, read once and kept (never pushed)
//
// Cache pool layout (either pool): [num_pages, kv_heads, page_tokens, head_dim], tiled, so key tile t
// of kv head g sits in page table[t / page_tiles] at tile row t % page_tiles.
#include "api/dataflow/dataflow_api.h"
#include "flash_attention_common.h"
#include "kv_share.h"

namespace {

constexpr uint32_t kBf16NegInf = 0xff80;
constexpr uint32_t kBf16Zero = 0x0000;
constexpr uint32_t kFace = 16;

// Writes a bf16 32x32 tile at `l1` (four-face order) whose element (i, j) is value(i, j).
template <typename F>
void fill_bf16_tile(uint32_t l1, F value) {
    volatile tt_l1_ptr uint16_t* t = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(static_cast<uintptr_t>(l1));
    for (uint32_t i = 0; i < fa::kTileDim; ++i) {
        for (uint32_t j = 0; j < fa::kTileDim; ++j) {
            const uint32_t face = (i / kFace) * 2 + j / kFace;
            t[face * kFace * kFace + (i % kFace) * kFace + j % kFace] = uint16_t(value(i, j));
        }
    }
}

// Causal masks: query i sees key j iff j - i <= d.
void generate_constant_tiles(uint32_t p0) {
    const int32_t delta = int32_t(p0 % fa::kTileDim);
    const uint32_t tile_bytes = get_tile_size(fa::cb_mask);
    cb_reserve_back(fa::cb_mask, fa::kNumMaskTiles);
    const uint32_t base = get_write_ptr(fa::cb_mask);
    const int32_t offsets[2] = {delta, delta - int32_t(fa::kTileDim)};
    for (uint32_t m = 0; m < 2; ++m) {
        const int32_t d = offsets[m];
        fill_bf16_tile(base + (m == 0 ? fa::kMaskDiag : fa::kMaskDiagPrev) * tile_bytes, [d](uint32_t i, uint32_t j) {
            return int32_t(j) - int32_t(i) > d ? kBf16NegInf : kBf16Zero;
        });
    }
    fill_bf16_tile(base + fa::kMaskAll * tile_bytes, [](uint32_t, uint32_t) { return kBf16NegInf; });
    cb_push_back(fa::cb_mask, fa::kNumMaskTiles);
}

}  // namespace

void kernel_main() {
    constexpr uint32_t Dt = get_compile_time_arg_val(0);
    constexpr uint32_t Bk = get_compile_time_arg_val(1);
    constexpr uint32_t kGroup = get_compile_time_arg_val(2);
    constexpr uint32_t kHeadsPerUnit = get_compile_time_arg_val(3);
    constexpr uint32_t kPageTiles = get_compile_time_arg_val(4);
    constexpr uint32_t kKvHeads = get_compile_time_arg_val(5);
    constexpr uint32_t kTableTiles = get_compile_time_arg_val(6);
    constexpr auto q_args = TensorAccessorArgs<7>();
    constexpr auto k_args = TensorAccessorArgs<q_args.next_compile_time_args_offset()>();
    constexpr auto v_args = TensorAccessorArgs<k_args.next_compile_time_args_offset()>();
    constexpr auto table_args = TensorAccessorArgs<v_args.next_compile_time_args_offset()>();

    const uint32_t q_addr = get_arg_val<uint32_t>(0);
    const uint32_t k_addr = get_arg_val<uint32_t>(1);
    const uint32_t v_addr = get_arg_val<uint32_t>(2);
    const uint32_t table_addr = get_arg_val<uint32_t>(3);
    const uint32_t p0 = get_arg_val<uint32_t>(4);
    const uint32_t sq = get_arg_val<uint32_t>(5);
    const uint32_t q_tiles_per_head = get_arg_val<uint32_t>(6);
    const uint32_t bq = get_arg_val<uint32_t>(7);
    const fa_share::Group share{get_arg_val<uint32_t>(8),  get_arg_val<uint32_t>(9),  get_arg_val<uint32_t>(10),
                                get_arg_val<uint32_t>(11), get_arg_val<uint32_t>(12), get_arg_val<uint32_t>(13),
                                get_arg_val<uint32_t>(14), get_arg_val<uint32_t>(15),
                                get_semaphore(get_arg_val<uint32_t>(16)), get_semaphore(get_arg_val<uint32_t>(17))};
    const uint32_t num_units = get_arg_val<uint32_t>(18);
    constexpr uint32_t kFirstUnitArg = 19;
    const uint32_t first_count_arg = kFirstUnitArg + num_units;

    const uint32_t q_tile_bytes = get_tile_size(fa::cb_q);
    const uint32_t kv_tile_bytes = get_tile_size(fa::cb_k);
    const auto q = TensorAccessor(q_args, q_addr, q_tile_bytes);
    const auto k = TensorAccessor(k_args, k_addr, kv_tile_bytes);
    const auto v = TensorAccessor(v_args, v_addr, kv_tile_bytes);
    const auto table = TensorAccessor(table_args, table_addr, get_tile_size(fa::cb_table));

    generate_constant_tiles(p0);

    // The page table stays in L1 for the whole program.
    cb_reserve_back(fa::cb_table, kTableTiles);
    const uint32_t table_l1 = get_write_ptr(fa::cb_table);
    for (uint32_t t = 0; t < kTableTiles; ++t) {
        noc_async_read_page(t, table, table_l1 + t * get_tile_size(fa::cb_table));
    }
    noc_async_read_barrier();
    const volatile tt_l1_ptr uint32_t* page_table =
        reinterpret_cast<const volatile tt_l1_ptr uint32_t*>(static_cast<uintptr_t>(table_l1));

    const uint32_t rows = kHeadsPerUnit * bq;
    constexpr uint32_t kBlockTiles = Bk * Dt;
    for (uint32_t n = 0; n < num_units; ++n) {
        const fa::Unit unit = fa::decode_unit(get_arg_val<uint32_t>(kFirstUnitArg + n));

        cb_reserve_back(fa::cb_q, rows * Dt);
        uint32_t l1 = get_write_ptr(fa::cb_q);
        for (uint32_t rho = 0; rho < rows; ++rho) {
            const uint32_t head = fa::row_head(unit, rho, kHeadsPerUnit, bq);
            const uint32_t first = (head * q_tiles_per_head + fa::row_q_tile(unit, rho, bq)) * Dt;
            for (uint32_t d = 0; d < Dt; ++d) {
                noc_async_read_page(first + d, q, l1);
                l1 += q_tile_bytes;
            }
        }
        noc_async_read_barrier();
        cb_push_back(fa::cb_q, rows * Dt);

        const uint32_t kv_head = fa::unit_kv_head(unit, kHeadsPerUnit, kGroup);
        const uint32_t key_tiles = get_arg_val<uint32_t>(first_count_arg + n);
        const uint32_t key_blocks = (key_tiles + Bk - 1) / Bk;
        for (uint32_t kb = 0; kb < key_blocks; ++kb) {
            const uint32_t width = fa::block_width(kb, key_tiles, Bk);
            cb_reserve_back(fa::cb_k, kBlockTiles);
            cb_reserve_back(fa::cb_v, kBlockTiles);
            const uint32_t k_l1 = get_write_ptr(fa::cb_k);
            const uint32_t v_l1 = get_write_ptr(fa::cb_v);
            if (share.role == fa_share::kReceiver) {
                fa_share::receive(share);
                cb_push_back(fa::cb_k, kBlockTiles);
                cb_push_back(fa::cb_v, kBlockTiles);
                continue;
            }
            for (uint32_t j = 0; j < width; ++j) {
                const uint32_t key_tile = kb * Bk + j;
                const uint32_t page = fa::page_table_entry(page_table, key_tile / kPageTiles);
                const uint32_t first = ((page * kKvHeads + kv_head) * kPageTiles + key_tile % kPageTiles) * Dt;
                for (uint32_t d = 0; d < Dt; ++d) {
                    noc_async_read_page(first + d, k, k_l1 + (d * Bk + j) * kv_tile_bytes);
                    noc_async_read_page(first + d, v, v_l1 + (j * Dt + d) * kv_tile_bytes);
                }
            }
            noc_async_read_barrier();
            if (share.role == fa_share::kSender) fa_share::send(share, k_l1, v_l1, kBlockTiles * kv_tile_bytes);
            cb_push_back(fa::cb_k, kBlockTiles);
            cb_push_back(fa::cb_v, kBlockTiles);
        }
    }
}
