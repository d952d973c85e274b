// GDN sequential pass, compute: the state-dependent part of the chunked form (shared/GDN.md) for one
// value head and a block of VBT value columns, chunk after chunk, with the fp32 state block h
// (K x 32*VBT) kept in L1 for the whole sequence:
//     Vnew = U + (-W) h
//     O    = exp(gam) * (Q h) + P Vnew                  (row scaling commutes with Q h)
//     h   <- exp(gam_last) h + K^T (exp(gam_last - gam) * Vnew)
// q and K^T (a transpose of the bf16 k tiles, exact) enter the matmuls in bf16, exact; h, -W, P and
// the scaled Vnew as TF32. The per-row factors and the state decay are SFPU products in fp32 DST, and
// the matmuls accumulate on top of them in fp32.
//
// With GDN_SCAN_FUSED defined this is the fused scan: each unit is a whole value head (VBT = VT), and
// before each chunk the kernel runs the chunk preparation itself (scan_prep_chunk.h), so the record
// (P, -W, U, factors) never leaves L1; only q, k, v, g and beta are read (by scan_prep_reader.cpp in
// its fused mode). CB indices of that mode are listed at their definitions below.
//
// Compile-time args: none.
// Common runtime args: 0 tiles per chunk (nt), 1 key tiles (KT), 2 value tiles per block (VBT),
//   3 chunks, 4 number of checkpoints, 5.. the chunk index after which each checkpoint is taken
//   (ascending).
// Runtime args: 0 number of units.
// CBs: inputs c_0 -W (nt x KT), c_1 U block (nt x VBT), c_2 q (nt x KT), c_3 P (nt(nt+1)/2),
//      c_4 k (nt x KT), c_5 factors (exp(gam) nt, exp(gam_last - gam) nt, exp(gam_last) 1; fp32),
//      c_6 initial state block (KT x VBT, fp32);
//      c_24 state (2 x KT x VBT, fp32, this kernel both ends), c_25 Vnew (nt x VBT, fp32),
//      c_26 scaled Vnew (nt x VBT, fp32), c_27 K^T (KT x nt, bf16);
//      outputs c_16 O tiles, c_17 state blocks (checkpoints, then the final state; fp32).
#include "api/compute/compute_kernel_hw_startup.h"
#include "gdn_compute.h"
#ifdef GDN_SCAN_FUSED
#include "scan_prep_chunk.h"
#endif

namespace {
#ifdef GDN_SCAN_FUSED
// The fused scan: the preparation's CBs (scan_prep_chunk.h) plus the records in L1, which this
// kernel produces and consumes itself; q and k are the preparation's own input CBs.
constexpr uint32_t cb_neg_w = tt::CBIndex::c_12;
constexpr uint32_t cb_u = tt::CBIndex::c_13;
constexpr uint32_t cb_q = gdn::prep::cb_q;
constexpr uint32_t cb_p = tt::CBIndex::c_11;
constexpr uint32_t cb_k = gdn::prep::cb_k;
constexpr uint32_t cb_factors = tt::CBIndex::c_14;
constexpr uint32_t cb_state_in = tt::CBIndex::c_15;
constexpr uint32_t cb_o = tt::CBIndex::c_16;
constexpr uint32_t cb_state_out = tt::CBIndex::c_17;
constexpr uint32_t cb_h = tt::CBIndex::c_18;
constexpr uint32_t cb_vnew = tt::CBIndex::c_19;
constexpr uint32_t cb_vscaled = tt::CBIndex::c_20;
constexpr uint32_t cb_kt = tt::CBIndex::c_21;
#else
constexpr uint32_t cb_neg_w = tt::CBIndex::c_0;
constexpr uint32_t cb_u = tt::CBIndex::c_1;
constexpr uint32_t cb_q = tt::CBIndex::c_2;
constexpr uint32_t cb_p = tt::CBIndex::c_3;
constexpr uint32_t cb_k = tt::CBIndex::c_4;
constexpr uint32_t cb_factors = tt::CBIndex::c_5;
constexpr uint32_t cb_state_in = tt::CBIndex::c_6;
constexpr uint32_t cb_o = tt::CBIndex::c_16;
constexpr uint32_t cb_state_out = tt::CBIndex::c_17;
constexpr uint32_t cb_h = tt::CBIndex::c_24;
constexpr uint32_t cb_vnew = tt::CBIndex::c_25;
constexpr uint32_t cb_vscaled = tt::CBIndex::c_26;
constexpr uint32_t cb_kt = tt::CBIndex::c_27;
#endif

// Common runtime arg holding the first checkpoint's chunk index.
constexpr uint32_t kFirstCheckpointArg = 5;
// Steps that scale by a factor tile keep it in the last DST slot and work on narrower blocks.
constexpr uint32_t kFactorDst = gdn::kDstTiles - 1;

inline uint32_t tri(uint32_t i, uint32_t j) { return i * (i + 1) / 2 + j; }
inline uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

// Copy `count` tiles of cb (at its front) into cb_dst, up to kDstTiles at a time.
void copy_block(uint32_t cb, uint32_t cb_dst, uint32_t count) {
    for (uint32_t t = 0; t < count; t += gdn::kDstTiles) {
        const uint32_t n = min_u32(gdn::kDstTiles, count - t);
        tile_regs_acquire();
        for (uint32_t i = 0; i < n; ++i) gdn::copy_in(cb, t + i, i);
        gdn::pack_dst_push(cb_dst, n);
    }
}

// DST[0 .. n) *= the factor tile `factor` of cb_factors.
void scale_dst(uint32_t factor, uint32_t n) {
    gdn::copy_in(cb_factors, factor, kFactorDst);
    for (uint32_t j = 0; j < n; ++j) gdn::mul_dst(j, kFactorDst, j);
}
}  // namespace

void kernel_main() {
    const uint32_t nt = get_common_arg_val<uint32_t>(0);
    const uint32_t key_tiles = get_common_arg_val<uint32_t>(1);
    const uint32_t block_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t num_chunks = get_common_arg_val<uint32_t>(3);
    const uint32_t num_checkpoints = get_common_arg_val<uint32_t>(4);
    const uint32_t num_units = get_arg_val<uint32_t>(0);
    const uint32_t ntri = nt * (nt + 1) / 2;
    const uint32_t state_tiles = key_tiles * block_tiles;
    const uint32_t chunk_tiles = nt * block_tiles;
    const uint32_t factor_exp_gam = 0;             // + row tile
    const uint32_t factor_to_last = nt;            // + row tile
    const uint32_t factor_state_decay = 2 * nt;
    const uint32_t factor_tiles = 2 * nt + 1;

    compute_kernel_hw_startup(cb_neg_w, cb_h, cb_o);
#ifdef GDN_SCAN_FUSED
    cb_wait_front(gdn::prep::cb_consts, gdn::kNumConsts);
    const gdn::prep::PrepOutputs records{cb_p, cb_neg_w, cb_u, cb_factors};
#endif

    for (uint32_t unit = 0; unit < num_units; ++unit) {
        cb_wait_front(cb_state_in, state_tiles);
        copy_block(cb_state_in, cb_h, state_tiles);
        cb_pop_front(cb_state_in, state_tiles);
        uint32_t next_checkpoint = 0;

        for (uint32_t c = 0; c < num_chunks; ++c) {
#ifdef GDN_SCAN_FUSED
            // The chunk's record, straight into L1 (block_tiles is the whole head here).
            gdn::prep::prepare_chunk(records, nt, key_tiles, block_tiles, true);
#endif
            cb_wait_front(cb_h, state_tiles);

            // Vnew = U + (-W) h, in blocks of up to 2 x 2 tiles: the unpacker reuses each -W tile across
            // the block's columns and each (fp32) h tile across its rows (2 x 4 tiles of Vnew: 8 unpacks
            // per key tile instead of 10 as two 1 x 4 rows). The blocks are packed to their places in the reserved chunk (cb_vnew holds
            // exactly one chunk, so the reservation never wraps) and pushed together.
            cb_wait_front(cb_neg_w, nt * key_tiles);
            cb_wait_front(cb_u, chunk_tiles);
            cb_reserve_back(cb_vnew, chunk_tiles);
            for (uint32_t i0 = 0; i0 < nt; i0 += 2) {
                const uint32_t rows = min_u32(2, nt - i0);
                const uint32_t cols = rows == 1 ? min_u32(gdn::kDstTiles, block_tiles) : 2;
                for (uint32_t j0 = 0; j0 < block_tiles; j0 += cols) {
                    const uint32_t n = min_u32(cols, block_tiles - j0);
                    tile_regs_acquire();
                    for (uint32_t r = 0; r < rows; ++r) {
                        for (uint32_t j = 0; j < n; ++j) gdn::copy_in(cb_u, (i0 + r) * block_tiles + j0 + j, r * n + j);
                    }
                    gdn::matmul_start(cb_neg_w, cb_h);
                    for (uint32_t kt = 0; kt < key_tiles; ++kt) {
                        matmul_block(cb_neg_w, cb_h, i0 * key_tiles + kt, kt * block_tiles + j0, 0, 0, n, rows,
                                     key_tiles);
                    }
                    tile_regs_commit();
                    tile_regs_wait();
                    pack_reconfig_data_format(cb_vnew);
                    for (uint32_t r = 0; r < rows; ++r) {
                        for (uint32_t j = 0; j < n; ++j) {
                            pack_tile<true>(r * n + j, cb_vnew, (i0 + r) * block_tiles + j0 + j);
                        }
                    }
                    tile_regs_release();
                }
            }
            cb_push_back(cb_vnew, chunk_tiles);
            cb_pop_front(cb_neg_w, nt * key_tiles);
            cb_pop_front(cb_u, chunk_tiles);

            // exp(gam_last - gam) * Vnew, for the state update.
            cb_wait_front(cb_vnew, chunk_tiles);
            cb_wait_front(cb_factors, factor_tiles);
            for (uint32_t i = 0; i < nt; ++i) {
                for (uint32_t j0 = 0; j0 < block_tiles; j0 += kFactorDst) {
                    const uint32_t n = min_u32(kFactorDst, block_tiles - j0);
                    tile_regs_acquire();
                    for (uint32_t j = 0; j < n; ++j) gdn::copy_in(cb_vnew, i * block_tiles + j0 + j, j);
                    scale_dst(factor_to_last + i, n);
                    gdn::pack_dst_push(cb_vscaled, n);
                }
            }

            // O = exp(gam) * (Q h) + P Vnew
            cb_wait_front(cb_q, nt * key_tiles);
            cb_wait_front(cb_p, ntri);
            for (uint32_t i = 0; i < nt; ++i) {
                for (uint32_t j0 = 0; j0 < block_tiles; j0 += kFactorDst) {
                    const uint32_t n = min_u32(kFactorDst, block_tiles - j0);
                    tile_regs_acquire();
                    gdn::matmul_start(cb_q, cb_h);
                    for (uint32_t kt = 0; kt < key_tiles; ++kt) {
                        gdn::matmul_row(cb_q, cb_h, i * key_tiles + kt, kt * block_tiles + j0, 0, n);
                    }
                    scale_dst(factor_exp_gam + i, n);
                    gdn::matmul_start(cb_p, cb_vnew);
                    for (uint32_t j = 0; j <= i; ++j) {
                        gdn::matmul_row(cb_p, cb_vnew, tri(i, j), j * block_tiles + j0, 0, n);
                    }
                    gdn::pack_dst_push(cb_o, n);
                }
            }
            cb_pop_front(cb_q, nt * key_tiles);
            cb_pop_front(cb_p, ntri);

            // K^T, tile (kt, i) = transpose of k tile (i, kt).
            cb_wait_front(cb_k, nt * key_tiles);
            for (uint32_t kt = 0; kt < key_tiles; ++kt) {
                for (uint32_t i = 0; i < nt; ++i) {
                    tile_regs_acquire();
                    gdn::transpose_in(cb_k, i * key_tiles + kt, 0);
                    gdn::pack_dst_push(cb_kt);
                }
            }
            cb_pop_front(cb_k, nt * key_tiles);

            // h <- exp(gam_last) h + K^T (exp(gam_last - gam) Vnew), into the other half of cb_h.
            cb_wait_front(cb_kt, key_tiles * nt);
            cb_wait_front(cb_vscaled, chunk_tiles);
            for (uint32_t kt = 0; kt < key_tiles; ++kt) {
                for (uint32_t j0 = 0; j0 < block_tiles; j0 += kFactorDst) {
                    const uint32_t n = min_u32(kFactorDst, block_tiles - j0);
                    tile_regs_acquire();
                    for (uint32_t j = 0; j < n; ++j) gdn::copy_in(cb_h, kt * block_tiles + j0 + j, j);
                    scale_dst(factor_state_decay, n);
                    gdn::matmul_start(cb_kt, cb_vscaled);
                    for (uint32_t i = 0; i < nt; ++i) {
                        gdn::matmul_row(cb_kt, cb_vscaled, kt * nt + i, i * block_tiles + j0, 0, n);
                    }
                    gdn::pack_dst_push(cb_h, n);
                }
            }
            cb_pop_front(cb_h, state_tiles);  // the old state; the new one is now at the front
            cb_pop_front(cb_vnew, chunk_tiles);
            cb_pop_front(cb_vscaled, chunk_tiles);
            cb_pop_front(cb_kt, key_tiles * nt);
            cb_pop_front(cb_factors, factor_tiles);

            const bool checkpoint = next_checkpoint < num_checkpoints &&
                                    get_common_arg_val<uint32_t>(kFirstCheckpointArg + next_checkpoint) == c;
            if (checkpoint) {
                cb_wait_front(cb_h, state_tiles);
                copy_block(cb_h, cb_state_out, state_tiles);
                ++next_checkpoint;
            }
        }
        cb_wait_front(cb_h, state_tiles);
        copy_block(cb_h, cb_state_out, state_tiles);
        cb_pop_front(cb_h, state_tiles);
    }
}
