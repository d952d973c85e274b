// The chunk preparation of the GDN scan (what scan_prep_compute.cpp does per unit), as a function
// shared by the preparation program and the fused scan (scan_seq_compute.cpp with GDN_SCAN_FUSED),
// which keeps the chunk's records in L1 instead of sending them through DRAM. The method and its
// accuracy are described in scan_prep_compute.cpp.
//
// CBs it owns (both programs place them at these indices): inputs c_0 k, c_1 q, c_2 v (bf16), c_3 g
// broadcast (nt + 1 tiles, the last zero), c_4 beta broadcast, c_5 constants (scan_prep_consts.h);
// scratch c_7 inverse running blocks (2 * kInverseLanes), c_8 masked A tiles, c_9 product tiles
// (kInverseLanes each), c_10 per-row factors (nt), c_24 gam (nt), c_25 gam transposed (nt), c_26 gam_last (1), c_27 decay, c_28 A,
// c_29 T (nt(nt+1)/2 each), c_30 right-hand sides (nt * (KT + VT)), all fp32.
// The outputs go to the CBs of PrepOutputs, in this order: P, -W, U, then the factor tiles.
#pragma once

#include "api/compute/cumsum.h"
#include "gdn_compute.h"
#include "scan_prep_consts.h"

namespace gdn::prep {

constexpr uint32_t cb_k = tt::CBIndex::c_0;
constexpr uint32_t cb_q = tt::CBIndex::c_1;
constexpr uint32_t cb_v = tt::CBIndex::c_2;
constexpr uint32_t cb_g = tt::CBIndex::c_3;
constexpr uint32_t cb_beta = tt::CBIndex::c_4;
constexpr uint32_t cb_consts = tt::CBIndex::c_5;
constexpr uint32_t cb_block_inv = tt::CBIndex::c_7;
constexpr uint32_t cb_masked = tt::CBIndex::c_8;
constexpr uint32_t cb_product = tt::CBIndex::c_9;
constexpr uint32_t cb_factor = tt::CBIndex::c_10;
constexpr uint32_t cb_gam = tt::CBIndex::c_24;
constexpr uint32_t cb_gam_t = tt::CBIndex::c_25;
constexpr uint32_t cb_gam_last = tt::CBIndex::c_26;
constexpr uint32_t cb_decay = tt::CBIndex::c_27;
constexpr uint32_t cb_a = tt::CBIndex::c_28;
constexpr uint32_t cb_t = tt::CBIndex::c_29;
constexpr uint32_t cb_rhs = tt::CBIndex::c_30;

// Tile (I, J), J <= I, of a lower block triangle stored row by row.
inline uint32_t tri(uint32_t i, uint32_t j) { return i * (i + 1) / 2 + j; }

// Where tile (I, J) of T sits in cb_t: the nt diagonal tiles first, then the off-diagonal ones in the
// order they are computed (I ascending, J descending).
inline uint32_t t_pos(uint32_t i, uint32_t j, uint32_t nt) {
    return i == j ? i : nt + i * (i - 1) / 2 + (i - 1 - j);
}

// One output tile: T rows I times a right-hand side of nt x width tiles (cb_rhs, from tile `base` of
// its front), columns [col, col + count), into cb_out.
inline void t_times_rhs(uint32_t cb_out, uint32_t i, uint32_t base, uint32_t col, uint32_t count, uint32_t width,
                        uint32_t nt) {
    tile_regs_acquire();
    gdn::matmul_start(cb_t, cb_rhs);
    for (uint32_t j = 0; j <= i; ++j) {
        gdn::matmul_row(cb_t, cb_rhs, t_pos(i, j, nt), base + j * width + col, 0, count);
    }
    gdn::pack_dst_push(cb_out, count);
}

// All of T times an nt x width right-hand side (from tile `base` of cb_rhs's front), into cb_out.
inline void t_times_rhs_all(uint32_t cb_out, uint32_t base, uint32_t width, uint32_t nt) {
    for (uint32_t i = 0; i < nt; ++i) {
        for (uint32_t c = 0; c < width; c += gdn::kDstTiles) {
            const uint32_t count = width - c < gdn::kDstTiles ? width - c : gdn::kDstTiles;
            t_times_rhs(cb_out, i, base, c, count, width, nt);
        }
    }
}

// cb_rhs <- factor(row tile J) * x(J, c) for every tile of an nt x width input, factors in cb_factors
// (waited for). The factor sits in the last DST slot, loaded once per block of up to kDstTiles - 1
// tiles of its row.
inline void scale_rows(uint32_t cb_x, uint32_t cb_factors, uint32_t width, uint32_t nt) {
    constexpr uint32_t factor_dst = gdn::kDstTiles - 1;
    for (uint32_t j = 0; j < nt; ++j) {
        for (uint32_t c0 = 0; c0 < width; c0 += factor_dst) {
            const uint32_t count = width - c0 < factor_dst ? width - c0 : factor_dst;
            tile_regs_acquire();
            gdn::copy_in(cb_factors, j, factor_dst);
            for (uint32_t c = 0; c < count; ++c) gdn::copy_in(cb_x, j * width + c0 + c, c);
            for (uint32_t c = 0; c < count; ++c) gdn::mul_dst(c, factor_dst, c);
            gdn::pack_dst_push(cb_rhs, count);
        }
    }
}

// Diagonal tiles inverted side by side: each step of the doubling waits for the previous step's
// packed tile, so one tile alone leaves the unpacker, FPU and packer taking turns; with two
// independent tiles in flight one's step fills the other's wait. Scratch CBs hold kInverseLanes tiles
// (cb_masked, cb_product) and 2 * kInverseLanes (cb_block_inv).
constexpr uint32_t kInverseLanes = 2;

// Inverses of the unit lower triangular diagonal tiles I + A(I,I), I in [first, first + lanes), into
// cb_t in order of I.
inline void invert_diagonal_tiles(uint32_t first, uint32_t lanes) {
    // 1-row blocks merged into 2-row blocks: D = I - (A masked to level 0).
    for (uint32_t l = 0; l < lanes; ++l) {
        tile_regs_acquire();
        gdn::copy_in(cb_consts, gdn::kConstIdentity, 0);
        gdn::copy_in(cb_a, tri(first + l, first + l), 1);
        gdn::mask_dst(1, cb_consts, gdn::kConstLevelMask0);
        gdn::sub_dst(0, 1, 0);
        gdn::pack_dst_push(cb_block_inv);
    }
    for (uint32_t level = 1; level < gdn::kInverseLevels; ++level) {
        // R: the entries of A that join the 2^level-row blocks pairwise.
        for (uint32_t l = 0; l < lanes; ++l) {
            tile_regs_acquire();
            gdn::copy_in(cb_a, tri(first + l, first + l), 0);
            gdn::mask_dst(0, cb_consts, gdn::kConstLevelMask0 + level);
            gdn::pack_dst_push(cb_masked);
        }
        // X = -(D R)
        cb_wait_front(cb_block_inv, lanes);
        cb_wait_front(cb_masked, lanes);
        for (uint32_t l = 0; l < lanes; ++l) {
            tile_regs_acquire();
            gdn::matmul_start(cb_block_inv, cb_masked);
            matmul_tiles(cb_block_inv, cb_masked, l, l, 0);
            gdn::negate_dst(0);
            gdn::pack_dst_push(cb_product);
        }
        cb_pop_front(cb_masked, lanes);
        // D <- D + X D (X taken one tile at a time: the forward substitution's single-tile traffic
        // through cb_product leaves its front anywhere, and a tile read may not wrap)
        const bool last = level + 1 == gdn::kInverseLevels;
        for (uint32_t l = 0; l < lanes; ++l) {
            cb_wait_front(cb_product, 1);
            tile_regs_acquire();
            gdn::copy_in(cb_block_inv, l, 0);
            gdn::matmul_start(cb_product, cb_block_inv);
            matmul_tiles(cb_product, cb_block_inv, 0, l, 0);
            gdn::pack_dst_push(last ? cb_t : cb_block_inv);
            cb_pop_front(cb_product, 1);
        }
        cb_pop_front(cb_block_inv, lanes);
    }
}

// Where one chunk's products go: P, -W, U (record tiles) and the fp32 factor tiles.
struct PrepOutputs {
    uint32_t p;
    uint32_t neg_w;
    uint32_t u;
    uint32_t factors;
};

// One (value head, chunk): waits for its inputs, pushes P, -W, U and the factor tiles to `out`, and
// pops everything it read except q and k when keep_qk (the fused scan consumes them after it).
inline void prepare_chunk(const PrepOutputs& out, uint32_t nt, uint32_t key_tiles, uint32_t value_tiles, bool keep_qk) {
    const uint32_t ntri = nt * (nt + 1) / 2;
    cb_wait_front(cb_k, nt * key_tiles);
    cb_wait_front(cb_q, nt * key_tiles);
    cb_wait_front(cb_v, nt * value_tiles);
    cb_wait_front(cb_g, nt + 1);
    cb_wait_front(cb_beta, nt);

    // gam = inclusive cumsum of g down the chunk (column broadcast); the zero tile after the
    // chunk comes out as gam_last everywhere. No other SFPU op may run between these cumsums.
    cumsum_tile_init();
    for (uint32_t i = 0; i <= nt; ++i) {
        tile_regs_acquire();
        gdn::copy_in(cb_g, i, 0);
        cumsum_tile(0, i == 0);
        gdn::pack_dst_push(i < nt ? cb_gam : cb_gam_last);
    }
    cb_wait_front(cb_gam, nt);
    cb_wait_front(cb_gam_last, 1);
    for (uint32_t j = 0; j < nt; ++j) {
        tile_regs_acquire();
        gdn::transpose_in(cb_gam, j, 0);
        gdn::pack_dst_push(cb_gam_t);
    }
    cb_wait_front(cb_gam_t, nt);

    // decay(I, J) = exp(gam_i - gam_j), zero above the diagonal.
    for (uint32_t i = 0; i < nt; ++i) {
        for (uint32_t j = 0; j <= i; ++j) {
            tile_regs_acquire();
            gdn::copy_in(cb_gam, i, 0);
            gdn::copy_in(cb_gam_t, j, 1);
            gdn::sub_dst(0, 1, 0);
            gdn::exp_dst(0);
            if (i == j) gdn::mask_dst(0, cb_consts, gdn::kConstLowerIncl);
            gdn::pack_dst_push(cb_decay);
        }
    }
    cb_wait_front(cb_decay, ntri);

    // A(I, J) = beta_i (k_i . k_j) decay_ij, strictly lower.
    for (uint32_t i = 0; i < nt; ++i) {
        for (uint32_t j = 0; j <= i; ++j) {
            tile_regs_acquire();
            gdn::matmul_start(cb_k, cb_k, 1);
            for (uint32_t kt = 0; kt < key_tiles; ++kt) {
                matmul_tiles(cb_k, cb_k, i * key_tiles + kt, j * key_tiles + kt, 0);
            }
            gdn::copy_in(cb_beta, i, 1);
            gdn::mul_dst(0, 1, 0);
            gdn::copy_in(cb_decay, tri(i, j), 1);
            gdn::mul_dst(0, 1, 0);
            if (i == j) gdn::mask_dst(0, cb_consts, gdn::kConstStrictLower);
            gdn::pack_dst_push(cb_a);
        }
    }
    cb_wait_front(cb_a, ntri);

    // P(I, J) = (q_i . k_j) decay_ij, lower including the diagonal (decay is zero above it).
    for (uint32_t i = 0; i < nt; ++i) {
        for (uint32_t j = 0; j <= i; ++j) {
            tile_regs_acquire();
            gdn::matmul_start(cb_q, cb_k, 1);
            for (uint32_t kt = 0; kt < key_tiles; ++kt) {
                matmul_tiles(cb_q, cb_k, i * key_tiles + kt, j * key_tiles + kt, 0);
            }
            gdn::copy_in(cb_decay, tri(i, j), 1);
            gdn::mul_dst(0, 1, 0);
            gdn::pack_dst_push(out.p);
        }
    }

    // T = (I + A)^-1: diagonal tiles, then block forward substitution below them.
    for (uint32_t i = 0; i < nt; i += kInverseLanes) {
        invert_diagonal_tiles(i, nt - i < kInverseLanes ? nt - i : kInverseLanes);
    }
    uint32_t t_done = nt;
    for (uint32_t i = 1; i < nt; ++i) {
        for (uint32_t j = i; j-- > 0;) {
            cb_wait_front(cb_t, t_done);
            // X = -sum_{j <= k < i} A(i, k) T(k, j)
            tile_regs_acquire();
            gdn::matmul_start(cb_a, cb_t);
            for (uint32_t kk = j; kk < i; ++kk) matmul_tiles(cb_a, cb_t, tri(i, kk), t_pos(kk, j, nt), 0);
            gdn::negate_dst(0);
            gdn::pack_dst_push(cb_product);
            // T(i, j) = T(i, i) X
            cb_wait_front(cb_product, 1);
            tile_regs_acquire();
            gdn::matmul_start(cb_t, cb_product);
            matmul_tiles(cb_t, cb_product, t_pos(i, i, nt), 0, 0);
            gdn::pack_dst_push(cb_t);
            cb_pop_front(cb_product, 1);
            ++t_done;
        }
    }
    cb_wait_front(cb_t, ntri);

    // -W = T (-(beta exp(gam)) k): the row factors first, then the scaled rows, then T times them.
    // exp(gam) is also the sequential pass's first factor: each row tile's exp is taken once and
    // packed twice, to the factor output (ahead of the other factors, which come at the end) and, times
    // -beta, to the row factors. The factor output CB must hold all factor tiles of a chunk for this.
    for (uint32_t j = 0; j < nt; ++j) {
        tile_regs_acquire();
        gdn::copy_in(cb_gam, j, 0);
        gdn::exp_dst(0);
        gdn::copy_in(cb_beta, j, 1);
        gdn::mul_dst(0, 1, 1);
        gdn::negate_dst(1);
        tile_regs_commit();
        tile_regs_wait();
        pack_reconfig_data_format(out.factors);
        cb_reserve_back(out.factors, 1);
        pack_tile(0, out.factors);
        cb_push_back(out.factors, 1);
        pack_reconfig_data_format(cb_factor);
        cb_reserve_back(cb_factor, 1);
        pack_tile(1, cb_factor);
        cb_push_back(cb_factor, 1);
        tile_regs_release();
    }
    cb_wait_front(cb_factor, nt);
    scale_rows(cb_k, cb_factor, key_tiles, nt);
    cb_pop_front(cb_factor, nt);
    // U = T (beta v): beta is its own row factor. Both right-hand sides are scaled before either
    // product, so the products never wait on a tile just packed.
    scale_rows(cb_v, cb_beta, value_tiles, nt);
    cb_wait_front(cb_rhs, nt * (key_tiles + value_tiles));
    t_times_rhs_all(out.neg_w, 0, key_tiles, nt);
    t_times_rhs_all(out.u, nt * key_tiles, value_tiles, nt);
    cb_pop_front(cb_rhs, nt * (key_tiles + value_tiles));

    // The rest of the factors for the sequential pass (exp(gam) went out with -W): exp(gam_last - gam)
    // (column broadcasts) and exp(gam_last), the state's decay over the chunk.
    for (uint32_t i = 0; i < nt; ++i) {
        tile_regs_acquire();
        gdn::copy_in(cb_gam_last, 0, 0);
        gdn::copy_in(cb_gam, i, 1);
        gdn::sub_dst(0, 1, 0);
        gdn::exp_dst(0);
        gdn::pack_dst_push(out.factors);
    }
    tile_regs_acquire();
    gdn::copy_in(cb_gam_last, 0, 0);
    gdn::exp_dst(0);
    gdn::pack_dst_push(out.factors);

    if (!keep_qk) {
        cb_pop_front(cb_k, nt * key_tiles);
        cb_pop_front(cb_q, nt * key_tiles);
    }
    cb_pop_front(cb_v, nt * value_tiles);
    cb_pop_front(cb_g, nt + 1);
    cb_pop_front(cb_beta, nt);
    cb_pop_front(cb_gam, nt);
    cb_pop_front(cb_gam_t, nt);
    cb_pop_front(cb_gam_last, 1);
    cb_pop_front(cb_decay, ntri);
    cb_pop_front(cb_a, ntri);
    cb_pop_front(cb_t, ntri);
}

}  // namespace gdn::prep
