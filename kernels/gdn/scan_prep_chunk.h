// The chunk preparation of the GDN scan: everything of one (value head, chunk) that does not depend on
// the recurrent state, shared by the preparation program (scan_prep_compute.cpp, records to DRAM) and
// the fused scan (scan_seq_compute.cpp with GDN_SCAN_FUSED, records kept in L1).
//
// With C = 32 nt tokens, gam the chunk's cumulative decay, A_ij = beta_i (k_i . k_j) exp(gam_i - gam_j)
// for i > j and T = (I + A)^-1, it produces three lower tile triangles (nt(nt+1)/2 tiles each, fp32):
//   P       (q_i . k_j) exp(gam_i - gam_j), j <= i
//   T~      T diag(beta)                        (the value side of Vnew)
//   -T^     -T diag(beta exp(gam))              (the key side of Vnew)
// from which the sequential part forms Vnew = U - W h = T~ v + (-T^)(k h) without ever forming W and U
// (W = T diag(beta exp(gam)) K, U = T diag(beta) V: the products regroup, saving the T K product).
//
// How, and why it is accurate:
//  * decay tiles: diagonal tiles exp(gam_r - gam_c) from exact fp32 gam vectors (gate_vectors.h),
//    broadcast on the SFPU (a column of gam minus a row of gam), the upper triangle zeroed before the
//    exp; off-diagonal tiles (I, J) as the product of two factors in [0, 1] that the gate-vector
//    program already exponentiated, exp(gam_r - end(J)) and exp(end(J) - gam_c): one exp per diagonal
//    tile is all the SFPU exp work of a chunk here.
//  * A, P: k k^T and q k^T on the FPU from bf16 inputs (exact products, fp32 sums), then the decay,
//    beta and the masks on the SFPU.
//  * T = (I + A)^-1: diagonal 32x32 tiles by recursive doubling: with D the inverse of the block
//    diagonal of 2^l-row blocks and R the entries that join pairs of those blocks, D <- D - D R D
//    inverts the 2^(l+1)-row blocks (D R is nilpotent of order 2 there). Starting from D = I - R_0
//    (1-row blocks), four more steps reach 32 rows. Every D is a block of the exact inverse, so no
//    intermediate grows past the entries of T itself (unlike the product form (I - A)(I + A^2)...,
//    whose partial products can reach binomial sizes for nearly parallel keys). Off-diagonal tiles by
//    block forward substitution: T(I,J) = -T(I,I) sum_{J<=K<I} A(I,K) T(K,J).
//  * T~ and -T^ scale T's columns on the SFPU (fp32). Matmul operands are TF32 in srcA/srcB, so T and
//    what is formed from it carry a relative error of ~1e-3 that grows with cond(I + A) (see
//    ttprefill/ops/gdn.py for the measured limits).
//
// CBs (both programs place them at these indices): inputs c_0 k, c_1 q (bf16, nt x KT), c_3 the
// chunk's gate vectors (gate_vectors.h), c_5 constants (scan_prep_consts.h); scratch c_7 inverse
// running blocks (2 kInverseLanes), c_9 product tiles (kInverseLanes), c_27
// decay, c_28 A, c_29 T (nt(nt+1)/2 each), all fp32. Outputs to the CBs of PrepOutputs.
#pragma once

#include "api/compute/copy_dest_values.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/sfpu_binary_bcast.h"
#include "api/debug/kernel_profiler.hpp"
#include "gate_vectors.h"
#include "gdn_compute.h"
#include "scan_prep_consts.h"

namespace gdn::prep {

constexpr uint32_t cb_k = tt::CBIndex::c_0;
constexpr uint32_t cb_q = tt::CBIndex::c_1;
constexpr uint32_t cb_vec = tt::CBIndex::c_3;
constexpr uint32_t cb_consts = tt::CBIndex::c_5;
constexpr uint32_t cb_block_inv = tt::CBIndex::c_7;
constexpr uint32_t cb_product = tt::CBIndex::c_9;
constexpr uint32_t cb_decay = tt::CBIndex::c_27;
constexpr uint32_t cb_a = tt::CBIndex::c_28;
constexpr uint32_t cb_t = tt::CBIndex::c_29;

// Where tile (I, J) of T sits in cb_t: the nt diagonal tiles first, then the off-diagonal ones in the
// order they are computed (I ascending, J descending).
inline uint32_t t_pos(uint32_t i, uint32_t j, uint32_t nt) {
    return i == j ? i : nt + i * (i - 1) / 2 + (i - 1 - j);
}

// DST[dst] = the column form of vector tile (q, i) of cb_vec: values in column 0 (its transpose, exact).
ALWI void col_vector(uint32_t q, uint32_t i, uint32_t nt, uint32_t dst) {
    gdn::transpose_in(cb_vec, gdn::gv::at(q, i, nt), dst);
}

// DST[dst] = vector tile (q, i) of cb_vec as it is: values in row 0.
ALWI void row_vector(uint32_t q, uint32_t i, uint32_t nt, uint32_t dst) {
    gdn::copy_in(cb_vec, gdn::gv::at(q, i, nt), dst);
}

// Decay tile (I, J) into cb_decay. Uses DST 0 and 1.
inline void decay_tile(uint32_t i, uint32_t j, uint32_t nt) {
    tile_regs_acquire();
    gdn::copy_in(cb_consts, gdn::kConstZero, 0);
    col_vector(i == j ? gdn::gv::kGam : gdn::gv::kFromTileEnd + j, i, nt, 1);
    sfpu_bcast_col_init();
    sfpu_add_bcast_col(0, 1);  // DST0[r][c] = gam_r, or exp(gam_r - end(J))
    if (i == j) {
        row_vector(gdn::gv::kGam, j, nt, 1);
        sfpu_bcast_row_init();
        sfpu_sub_bcast_row(0, 1);  // gam_r - gam_c
        gdn::mask_dst(0, cb_consts, gdn::kConstLowerIncl);  // exponents above the diagonal -> 0
        gdn::pack_exp_push(cb_decay);                        // the exp on the pack thread
        return;
    }
    row_vector(gdn::gv::kToTileEnd, j, nt, 1);
    sfpu_bcast_row_init();
    sfpu_mul_bcast_row(0, 1);  // times exp(end(J) - gam_c)
    gdn::pack_dst_push(cb_decay);
}

// Where k k^T and q k^T come from: matmuls of cb_k and cb_q (the default), or lower tile triangles
// already formed in fp32 CBs (KeyProductJobs) for the value heads of one q/k group, which share k
// and q: a helper core preparing a group's heads forms them once. Either way the same fp32 values.
struct KeyProducts {
    uint32_t cb_kk = 0, cb_qk = 0;
    bool precomputed = false;
};

// k k^T and q k^T of the chunk (tri order, fp32) into kp.cb_kk and kp.cb_qk, one tile pair per run_one
// (false once all are formed and waited for): FPU work, so it can overlap the decay tiles' exps.
struct KeyProductJobs {
    KeyProducts kp;
    uint32_t nt, key_tiles;
    uint32_t i = 0, j = 0;
    bool done = false;
    bool run_one() {
        if (done) return false;
        tile_regs_acquire();
        gdn::matmul_start(cb_k, cb_k, 1);
        for (uint32_t kt = 0; kt < key_tiles; ++kt) matmul_tiles(cb_k, cb_k, i * key_tiles + kt, j * key_tiles + kt, 0);
        gdn::matmul_start(cb_q, cb_k, 1);
        for (uint32_t kt = 0; kt < key_tiles; ++kt) matmul_tiles(cb_q, cb_k, i * key_tiles + kt, j * key_tiles + kt, 1);
        gdn::pack_pair_push(kp.cb_kk, kp.cb_qk);
        if (++j > i) j = 0, ++i;
        if (i == nt) {
            done = true;
            cb_wait_front(kp.cb_kk, nt * (nt + 1) / 2);
            cb_wait_front(kp.cb_qk, nt * (nt + 1) / 2);
        }
        return true;
    }
};

// (left_I k_J^T) decay(I, J), times beta_I when with_beta, with the diagonal tile masked to
// `diagonal_mask`, into cb_out. Uses DST 0 and 1.
inline void decayed_product_tile(uint32_t cb_left, uint32_t i, uint32_t j, uint32_t nt, uint32_t key_tiles,
                                 bool with_beta, uint32_t diagonal_mask, uint32_t cb_out, const KeyProducts& kp) {
    tile_regs_acquire();
    if (kp.precomputed) {
        gdn::copy_in(cb_left == cb_k ? kp.cb_kk : kp.cb_qk, tri(i, j), 0);
    } else {
        gdn::matmul_start(cb_left, cb_k, 1);
        for (uint32_t kt = 0; kt < key_tiles; ++kt) matmul_tiles(cb_left, cb_k, i * key_tiles + kt, j * key_tiles + kt, 0);
    }
    gdn::copy_in(cb_decay, tri(i, j), 1);
    gdn::mul_dst(0, 1, 0);
    if (with_beta) {
        col_vector(gdn::gv::kBeta, i, nt, 1);
        sfpu_bcast_col_init();
        sfpu_mul_bcast_col(0, 1);
    }
    if (i == j) gdn::mask_dst(0, cb_consts, diagonal_mask);
    gdn::pack_dst_push(cb_out);
}

// A(I, J) = beta_I (k_I k_J^T) decay(I, J), strictly lower, into cb_a.
inline void a_tile(uint32_t i, uint32_t j, uint32_t nt, uint32_t key_tiles, const KeyProducts& kp) {
    decayed_product_tile(cb_k, i, j, nt, key_tiles, true, gdn::kConstStrictLower, cb_a, kp);
}

// P(I, J) = (q_I k_J^T) decay(I, J), lower including the diagonal, into cb_p.
inline void p_tile(uint32_t i, uint32_t j, uint32_t nt, uint32_t key_tiles, uint32_t cb_p, const KeyProducts& kp) {
    decayed_product_tile(cb_q, i, j, nt, key_tiles, false, gdn::kConstLowerIncl, cb_p, kp);
}

// The P tiles of a chunk as jobs for the inverse's idle gaps (see invert): run_one computes the next
// one, false once all are done.
struct PJobs {
    uint32_t nt, key_tiles, cb_p;
    KeyProducts kp = {};
    uint32_t i = 0, j = 0;
    bool run_one() {
        if (i == nt) return false;
        p_tile(i, j, nt, key_tiles, cb_p, kp);
        if (++j > i) j = 0, ++i;
        return true;
    }
};

// The inverse is a chain of dependent steps: each matmul reads a tile the step before it packed, so on
// its own it leaves the unpacker, FPU and packer taking turns. Two things fill the waits: the diagonal
// tiles are inverted side by side (kInverseLanes lanes, one's step runs while the other's result is
// packed), and between dependent steps the caller's `fill` runs one job of independent work (P tiles,
// and in the fused scan the state-side products of the sequential part).
// Scratch CBs: cb_product kInverseLanes tiles, cb_block_inv 2 * kInverseLanes.
constexpr uint32_t kInverseLanes = 2;

// Inverses of the unit lower triangular diagonal tiles I + A(I,I), I in [first, first + lanes), into
// cb_t in order of I.
//
// A level's joining entries R = A o M (M: rows of the lower 2^l-row block of each pair, columns of its
// partner) enter as D R = (D A) o M: D is block diagonal, so row r of D A has non-zero terms
// D(r, k) A(k, c) for k in r's own block only, the same as D R in the same order (for finite A; the
// other terms are exact zeros in both), and the mask keeps exactly D R's non-zero entries. The product
// is masked instead of A, so no masked copy of A is formed and stored.
template <typename Fill>
inline void invert_diagonal_tiles(uint32_t first, uint32_t lanes, Fill& fill) {
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
        fill();
        // X = -(D A) o M_level = -(D R)
        cb_wait_front(cb_block_inv, lanes);
        for (uint32_t l = 0; l < lanes; ++l) {
            tile_regs_acquire();
            gdn::matmul_start(cb_block_inv, cb_a);
            matmul_tiles(cb_block_inv, cb_a, l, tri(first + l, first + l), 0);
            gdn::mask_dst(0, cb_consts, gdn::kConstLevelMask0 + level);
            gdn::negate_dst(0);
            gdn::pack_dst_push(cb_product);
        }
        fill();
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

// T = (I + A)^-1 into cb_t (t_pos order): diagonal tiles, then block forward substitution below them.
template <typename Fill>
inline void invert(uint32_t nt, Fill& fill) {
    for (uint32_t i = 0; i < nt; i += kInverseLanes) {
        invert_diagonal_tiles(i, nt - i < kInverseLanes ? nt - i : kInverseLanes, fill);
    }
    uint32_t t_done = nt;
    for (uint32_t i = 1; i < nt; ++i) {
        for (uint32_t j = i; j-- > 0;) {
            fill();
            cb_wait_front(cb_t, t_done);
            // X = -sum_{j <= k < i} A(i, k) T(k, j)
            tile_regs_acquire();
            gdn::matmul_start(cb_a, cb_t);
            for (uint32_t kk = j; kk < i; ++kk) matmul_tiles(cb_a, cb_t, tri(i, kk), t_pos(kk, j, nt), 0);
            gdn::negate_dst(0);
            gdn::pack_dst_push(cb_product);
            fill();
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
    cb_wait_front(cb_t, nt * (nt + 1) / 2);
}

// Where one chunk's products go: P, T~ and -T^ (tri order each).
struct PrepOutputs {
    uint32_t p;
    uint32_t t_beta;
    uint32_t neg_t_beta_exp;
};

// No other work to overlap with.
inline bool no_jobs() { return false; }

// One (value head, chunk): waits for k, q and the gate vectors, pushes P, then T~ and -T^ to `out`.
// `fill` runs one job of other work per call (false when it has none left); P tiles must be among its
// jobs (PJobs), and prepare_chunk runs it dry before it returns. `fpu_work` is the same for jobs that
// keep the FPU busy and need neither the decay tiles nor A: one runs after each diagonal decay tile,
// whose exp is then on the pack thread, and the rest before A is formed (KeyProductJobs, when A needs
// them, must be among them). Pops its scratch; pops k, q and the gate vectors only when pop_inputs
// (the fused scan's sequential part reads them after it).
template <typename Fill, typename FpuWork>
inline void prepare_chunk(const PrepOutputs& out, uint32_t nt, uint32_t key_tiles, bool pop_inputs, Fill& fill,
                          FpuWork& fpu_work, const KeyProducts& kp = {}) {
    const uint32_t ntri = nt * (nt + 1) / 2;
    cb_wait_front(cb_k, nt * key_tiles);
    cb_wait_front(cb_q, nt * key_tiles);
    cb_wait_front(cb_vec, gdn::gv::kinds(nt) * nt);
    {
        DeviceZoneScopedN("prep.decay_A");
        for (uint32_t i = 0; i < nt; ++i) {
            for (uint32_t j = 0; j <= i; ++j) decay_tile(i, j, nt);
            fpu_work();  // overlaps the exp of diagonal tile (i, i)
        }
        while (fpu_work()) {
        }
        cb_wait_front(cb_decay, ntri);
        for (uint32_t i = 0; i < nt; ++i) {
            for (uint32_t j = 0; j <= i; ++j) a_tile(i, j, nt, key_tiles, kp);
        }
        cb_wait_front(cb_a, ntri);
    }
    {
        DeviceZoneScopedN("prep.T_and_fill");
        invert(nt, fill);
        while (fill()) {
        }
    }
    {
        DeviceZoneScopedN("prep.T_scaled");
        // T~(I, J) = T(I, J) diag(beta_J), -T^(I, J) = -T(I, J) diag(beta_J exp(gam_J)).
        for (uint32_t i = 0; i < nt; ++i) {
            for (uint32_t j = 0; j <= i; ++j) {
                tile_regs_acquire();
                gdn::copy_in(cb_t, t_pos(i, j, nt), 0);
                copy_dest_values_init();  // the second copy of T on the SFPU: cheaper than unpacking fp32 again
                copy_dest_values<DataFormat::Float32>(0, 1);
                row_vector(gdn::gv::kBeta, j, nt, 2);
                sfpu_bcast_row_init();
                sfpu_mul_bcast_row(0, 2);
                row_vector(gdn::gv::kBetaExpGam, j, nt, 2);
                sfpu_bcast_row_init();
                sfpu_mul_bcast_row(1, 2);
                gdn::negate_dst(1);
                gdn::pack_pair_push(out.t_beta, out.neg_t_beta_exp);
            }
        }
    }
    if (pop_inputs) {
        cb_pop_front(cb_k, nt * key_tiles);
        cb_pop_front(cb_q, nt * key_tiles);
        cb_pop_front(cb_vec, gdn::gv::kinds(nt) * nt);
    }
    cb_pop_front(cb_decay, ntri);
    cb_pop_front(cb_a, ntri);
    cb_pop_front(cb_t, ntri);
}

}  // namespace gdn::prep
