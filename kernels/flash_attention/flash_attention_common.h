// Shared by the flash-attention reader, compute and writer kernels: circular-buffer indices, the
// decoding of a work unit, and the geometry of the causal mask. Each kernel walks the same loops
// over these helpers, so the three of them agree on what is pushed and popped, and in what order.
//
// Terms. A query tile-row is 32 query tokens of one head; a key tile is 32 key tokens. A work unit
// is (head group hg, query block b): the query tile-rows [b * Bq, (b + 1) * Bq) of the `hpu` query heads
// hg * hpu .. hg * hpu + hpu - 1, which all read kv head hg * hpu / group (GQA: hpu divides the `group`
// query heads per kv head). That is R = hpu * Bq rows in all, held in L1 as one Q block; row rho is
// query head hg * hpu + rho / Bq, query tile-row b * Bq + rho % Bq. The unit streams key blocks of Bk
// key tiles (kb = 0, 1, ...) up to the last key its last valid query may see; the last key block may be
// narrower (w key tiles).
#pragma once

#include <cstdint>

namespace fa {

constexpr uint32_t kTileDim = 32;

// ---- circular buffers (the program builder in ttprefill/ops/flash_attention.py uses the same numbers)
constexpr uint32_t cb_q = tt::CBIndex::c_0;          // Q block, R x Dt tiles, bf16
constexpr uint32_t cb_k = tt::CBIndex::c_1;          // K block, Dt x Bk tiles (transposed tile order), page format
constexpr uint32_t cb_v = tt::CBIndex::c_2;          // V block, Bk x Dt tiles, page format
constexpr uint32_t cb_mask = tt::CBIndex::c_3;       // the three causal mask tiles, bf16 (0 or -inf)
constexpr uint32_t cb_ones = tt::CBIndex::c_4;       // one tile of 1.0 (reduce scaler, broadcast source), bfp8 (exact), made by compute
constexpr uint32_t cb_gate = tt::CBIndex::c_5;       // output-gate tiles, bf16 (gated programs only)
constexpr uint32_t cb_table = tt::CBIndex::c_6;      // page table tiles, UInt32 (reader scratch)
constexpr uint32_t cb_spread = tt::CBIndex::c_7;     // ct_s tiles of 1/32, bfp8 (exact), made by compute: M @ spread^T spreads M's row mean
constexpr uint32_t cb_out = tt::CBIndex::c_16;       // output tiles, bf16
constexpr uint32_t cb_psum = tt::CBIndex::c_17;      // a row group's probabilities summed element-wise over a key block, rt tiles
                                                     // (room for two row groups), fp32
constexpr uint32_t cb_m_new = tt::CBIndex::c_20;     // a row group's new -m, before it joins the state, bfp8 (as cb_m)
constexpr uint32_t cb_bmax = tt::CBIndex::c_21;      // a key block's row max of one row group (column 0), fp32
constexpr uint32_t cb_l_inv = tt::CBIndex::c_22;     // 1 / row sum of one row group, fp32
constexpr uint32_t cb_o_tmp = tt::CBIndex::c_23;     // one rescaled output chunk, fp32
constexpr uint32_t cb_s = tt::CBIndex::c_24;         // scores of one row group, rt x Bk tiles, scores' format
constexpr uint32_t cb_p = tt::CBIndex::c_25;         // probabilities of one row group, rt x Bk tiles (room for two), bf16
constexpr uint32_t cb_o = tt::CBIndex::c_26;         // running output, R x Dt tiles, fp32 (rotating state)
constexpr uint32_t cb_m = tt::CBIndex::c_27;         // running -m (negated shift) broadcast over the row, R tiles by row, bfp8
                                                     // (a row's 16-value groups share one exponent exactly; half a bf16 tile to unpack)
constexpr uint32_t cb_l = tt::CBIndex::c_28;         // running row sum (column 0), R (+ rt) tiles, fp32 (rotating state)
constexpr uint32_t cb_shift = tt::CBIndex::c_29;     // -m as the matrix unit applies it, broadcast, one row group, fp32
constexpr uint32_t cb_l_new = tt::CBIndex::c_30;     // a row group's row sums before the overflow check, bf16 (the guard allows for the rounding)
constexpr uint32_t cb_alpha = tt::CBIndex::c_31;     // exp(scale (m_old - m_new)) broadcast over the row, fp32

// ---- mask tiles in cb_mask. Query i of a tile sees key j of a tile iff j - i <= d, where
// d = p0 + 32 * (query tile-row - key tile) (see diag_offset). d is p0 mod 32 or that minus 32 on
// every tile that straddles the diagonal, so two partial masks and one all-masked tile cover them all.
constexpr uint32_t kMaskDiag = 0;      // d == p0 % 32
constexpr uint32_t kMaskDiagPrev = 1;  // d == p0 % 32 - 32
constexpr uint32_t kMaskAll = 2;       // every key masked (d <= -32)
constexpr uint32_t kNumMaskTiles = 3;
constexpr uint32_t kNoMask = 0xffffffffu;

inline int32_t diag_offset(uint32_t p0, uint32_t q_tile_row, uint32_t key_tile) {
    return int32_t(p0) + int32_t(kTileDim) * (int32_t(q_tile_row) - int32_t(key_tile));
}

// Which mask tile (or kNoMask) the score tile (query tile-row, key tile) needs.
inline uint32_t mask_for(uint32_t p0, uint32_t q_tile_row, uint32_t key_tile) {
    const int32_t d = diag_offset(p0, q_tile_row, key_tile);
    if (d >= int32_t(kTileDim) - 1) return kNoMask;
    if (d <= -int32_t(kTileDim)) return kMaskAll;
    return d == int32_t(p0 % kTileDim) ? kMaskDiag : kMaskDiagPrev;
}

// ---- work units: packed as (head group << 16) | query block in the runtime args.
struct Unit {
    uint32_t head_group;
    uint32_t q_block;
};
inline Unit decode_unit(uint32_t packed) { return Unit{packed >> 16, packed & 0xffffu}; }
inline uint32_t unit_kv_head(Unit u, uint32_t hpu, uint32_t group) { return u.head_group * hpu / group; }

// Key tiles the unit reads: up to the one holding the key at the position of its last valid query.
inline uint32_t unit_key_tiles(uint32_t q_block, uint32_t bq, uint32_t p0, uint32_t sq) {
    uint32_t rows_end = (q_block + 1) * bq * kTileDim;
    if (rows_end > sq) rows_end = sq;
    const uint32_t last_position = p0 + rows_end - 1;
    return last_position / kTileDim + 1;
}

// Key tiles in key block kb of a unit with n_key_tiles in all (Bk except maybe the last).
inline uint32_t block_width(uint32_t kb, uint32_t n_key_tiles, uint32_t bk) {
    const uint32_t left = n_key_tiles - kb * bk;
    return left < bk ? left : bk;
}

// Query head and query tile-row of row rho of a unit's Q block.
inline uint32_t row_head(Unit u, uint32_t rho, uint32_t hpu, uint32_t bq) { return u.head_group * hpu + rho / bq; }
inline uint32_t row_q_tile(Unit u, uint32_t rho, uint32_t bq) { return u.q_block * bq + rho % bq; }

// ---- the output is produced in chunks of rt rows x ct head-dim tiles: for each row group
// (rows rho0 .. rho0 + rt), for each chunk of ct columns, tiles in (row, column) order. This is the
// order in which the rotating output state sits in cb_o and in which cb_out and cb_gate are filled.
inline uint32_t out_chunk_cols(uint32_t rt, uint32_t dst_tiles, uint32_t dt) {
    const uint32_t ct = dst_tiles / rt;
    return ct < dt ? ct : dt;
}

// Entry i of the page table, held in L1 as UInt32 tiles of a [rows, 32] tensor (entry i at row i / 32,
// column i % 32; each tile in the hardware's four-face order).
inline uint32_t page_table_entry(const volatile uint32_t* tiles, uint32_t i) {
    const uint32_t tile = i / (kTileDim * kTileDim);
    const uint32_t row = (i / kTileDim) % kTileDim;
    const uint32_t col = i % kTileDim;
    constexpr uint32_t kFace = 16;
    const uint32_t face = (row / kFace) * 2 + col / kFace;
    return tiles[tile * kTileDim * kTileDim + face * kFace * kFace + (row % kFace) * kFace + col % kFace];
}

}  // namespace fa
