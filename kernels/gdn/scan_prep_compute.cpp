// GDN chunk preparation, compute: everything of one chunk of one value head that does not depend
// on the recurrent state (shared/GDN.md, chunked form), for the sequential pass to consume.
//
// With C = 32 * nt tokens, K = 32 * KT, V = 32 * VT, per unit it produces, in this order:
//   P     (q_i . k_j) exp(gam_i - gam_j) for i >= j     the lower tile triangle, nt(nt+1)/2 tiles
//   -W    -(T diag(beta exp(gam)) K)                    nt x KT tiles
//   U     T diag(beta) V                                nt x VT tiles
// into c_16 (the chunk record), and into c_17 the fp32 factor tiles the sequential pass scales with:
//   exp(gam_i)              column broadcast per row tile, nt tiles
//   exp(gam_last - gam_i)   column broadcast per row tile, nt tiles
//   exp(gam_last)           in every element, 1 tile
// gam is the inclusive cumulative sum of g in the chunk, T = (I + A)^-1 with
// A_ij = beta_i (k_i . k_j) exp(gam_i - gam_j) for i > j.
//
// How (and why it is accurate):
//  * gam: cumsum_tile down the column broadcast of g (SFPU, fp32); the tile after the chunk is a zero
//    tile, whose cumsum is the carried total gam_last in every element. gam as a row broadcast is the
//    transpose (exact). So every exponent is formed in fp32 from exact fp32 operands: no exp(gam)
//    with a TF32-rounded gam, whose error would grow with |gam|.
//  * A, P: k k^T and q k^T on the FPU from bf16 inputs (exact products, fp32 sums), then the beta and
//    decay factors and the masks on the SFPU.
//  * T = (I + A)^-1, A strictly lower: diagonal 32x32 tiles by recursive doubling: with D the inverse
//    of the block diagonal of 2^l-row blocks and R the entries that join pairs of those blocks,
//    D <- D - D R D inverts the 2^(l+1)-row blocks (D R is nilpotent of order 2 there). Starting from
//    D = I - R_0 (1-row blocks), four more steps reach 32 rows, 8 tile matmuls. Every D is a block of
//    the exact inverse, so no intermediate grows past the entries of T itself (unlike the product
//    form (I - A)(I + A^2)..., whose partial products of A^(2^m) can reach binomial sizes for nearly
//    parallel keys). Off-diagonal tiles by block forward substitution:
//    T(I,J) = -T(I,I) sum_{J<=K<I} A(I,K) T(K,J).
//  * Matmul operands are TF32 in srcA/srcB, so T, W and U carry a relative error of ~1e-3 that grows
//    with cond(I + A) (see ttprefill/ops/gdn.py for the measured limits).
//
// Compile-time args: none.
// Common runtime args: 0 tiles per chunk (nt), 1 key tiles (KT), 2 value tiles (VT).
// Runtime args: 0 number of units.
// CBs: inputs c_0 k, c_1 q, c_2 v (bf16), c_3 g broadcast (nt + 1 tiles, the last zero), c_4 beta
//      broadcast, c_5 constants (scan_prep_consts.h);
//      scratch c_7 inverse running block (2), c_8 masked A tile (1), c_9 product tile (1),
//      c_10 per-row factors (nt), c_24 gam (nt), c_25 gam transposed (nt), c_26 gam_last (1),
//      c_27 decay (nt(nt+1)/2), c_28 A (nt(nt+1)/2), c_29 T (nt(nt+1)/2), c_30 right-hand sides
//      (nt * (KT + VT)), all fp32;
//      outputs c_16 records (to the writer), c_17 factor tiles (fp32).
#include "api/compute/cumsum.h"
#include "gdn_compute.h"
#include "scan_prep_consts.h"

namespace {
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
constexpr uint32_t cb_out = tt::CBIndex::c_16;
constexpr uint32_t cb_factors_out = tt::CBIndex::c_17;
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

// One output tile: T rows I times a right-hand side of nt x width tiles (cb_rhs), columns
// [col, col + count), into cb_out.
void t_times_rhs(uint32_t i, uint32_t col, uint32_t count, uint32_t width, uint32_t nt) {
    tile_regs_acquire();
    gdn::matmul_start(cb_t, cb_rhs);
    for (uint32_t j = 0; j <= i; ++j) gdn::matmul_row(cb_t, cb_rhs, t_pos(i, j, nt), j * width + col, 0, count);
    gdn::pack_dst_push(cb_out, count);
}

// cb_rhs <- factor(row tile J) * x(J, c) for every tile of an nt x width input, factors in cb_factor.
void scale_rows(uint32_t cb_x, uint32_t width, uint32_t nt) {
    for (uint32_t j = 0; j < nt; ++j) {
        for (uint32_t c = 0; c < width; ++c) {
            tile_regs_acquire();
            gdn::copy_in(cb_x, j * width + c, 0);
            gdn::copy_in(cb_factor, j, 1);
            gdn::mul_dst(0, 1, 0);
            gdn::pack_dst_push(cb_rhs);
        }
    }
}

// Inverse of the unit lower triangular diagonal tile I + A(I,I), into cb_t.
void invert_diagonal_tile(uint32_t i) {
    const uint32_t a_ii = tri(i, i);
    // 1-row blocks merged into 2-row blocks: D = I - (A masked to level 0).
    tile_regs_acquire();
    gdn::copy_in(cb_consts, gdn::kConstIdentity, 0);
    gdn::copy_in(cb_a, a_ii, 1);
    gdn::mask_dst(1, cb_consts, gdn::kConstLevelMask0);
    gdn::sub_dst(0, 1, 0);
    gdn::pack_dst_push(cb_block_inv);
    for (uint32_t level = 1; level < gdn::kInverseLevels; ++level) {
        // R: the entries of A that join the 2^level-row blocks pairwise.
        tile_regs_acquire();
        gdn::copy_in(cb_a, a_ii, 0);
        gdn::mask_dst(0, cb_consts, gdn::kConstLevelMask0 + level);
        gdn::pack_dst_push(cb_masked);
        // X = -(D R)
        cb_wait_front(cb_block_inv, 1);
        cb_wait_front(cb_masked, 1);
        tile_regs_acquire();
        gdn::matmul_start(cb_block_inv, cb_masked);
        matmul_tiles(cb_block_inv, cb_masked, 0, 0, 0);
        gdn::negate_dst(0);
        gdn::pack_dst_push(cb_product);
        cb_pop_front(cb_masked, 1);
        // D <- D + X D
        cb_wait_front(cb_product, 1);
        tile_regs_acquire();
        gdn::copy_in(cb_block_inv, 0, 0);
        gdn::matmul_start(cb_product, cb_block_inv);
        matmul_tiles(cb_product, cb_block_inv, 0, 0, 0);
        const bool last = level + 1 == gdn::kInverseLevels;
        gdn::pack_dst_push(last ? cb_t : cb_block_inv);
        cb_pop_front(cb_block_inv, 1);
        cb_pop_front(cb_product, 1);
    }
}
}  // namespace

void kernel_main() {
    const uint32_t nt = get_common_arg_val<uint32_t>(0);
    const uint32_t key_tiles = get_common_arg_val<uint32_t>(1);
    const uint32_t value_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t num_units = get_arg_val<uint32_t>(0);
    const uint32_t ntri = nt * (nt + 1) / 2;

    compute_kernel_hw_startup(cb_k, cb_k, cb_out);
    cb_wait_front(cb_consts, gdn::kNumConsts);

    for (uint32_t unit = 0; unit < num_units; ++unit) {
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
                gdn::pack_dst_push(cb_out);
            }
        }

        // T = (I + A)^-1: diagonal tiles, then block forward substitution below them.
        for (uint32_t i = 0; i < nt; ++i) invert_diagonal_tile(i);
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
        for (uint32_t j = 0; j < nt; ++j) {
            tile_regs_acquire();
            gdn::copy_in(cb_gam, j, 0);
            gdn::exp_dst(0);
            gdn::copy_in(cb_beta, j, 1);
            gdn::mul_dst(0, 1, 0);
            gdn::negate_dst(0);
            gdn::pack_dst_push(cb_factor);
        }
        cb_wait_front(cb_factor, nt);
        scale_rows(cb_k, key_tiles, nt);
        cb_pop_front(cb_factor, nt);
        cb_wait_front(cb_rhs, nt * key_tiles);
        for (uint32_t i = 0; i < nt; ++i) {
            for (uint32_t c = 0; c < key_tiles; c += gdn::kDstTiles) {
                const uint32_t count = key_tiles - c < gdn::kDstTiles ? key_tiles - c : gdn::kDstTiles;
                t_times_rhs(i, c, count, key_tiles, nt);
            }
        }
        cb_pop_front(cb_rhs, nt * key_tiles);

        // U = T (beta v)
        for (uint32_t j = 0; j < nt; ++j) {
            tile_regs_acquire();
            gdn::copy_in(cb_beta, j, 0);
            gdn::pack_dst_push(cb_factor);
        }
        cb_wait_front(cb_factor, nt);
        scale_rows(cb_v, value_tiles, nt);
        cb_pop_front(cb_factor, nt);
        cb_wait_front(cb_rhs, nt * value_tiles);
        for (uint32_t i = 0; i < nt; ++i) {
            for (uint32_t c = 0; c < value_tiles; c += gdn::kDstTiles) {
                const uint32_t count = value_tiles - c < gdn::kDstTiles ? value_tiles - c : gdn::kDstTiles;
                t_times_rhs(i, c, count, value_tiles, nt);
            }
        }
        cb_pop_front(cb_rhs, nt * value_tiles);

        // Factors for the sequential pass: exp(gam), exp(gam_last - gam) (column broadcasts) and
        // exp(gam_last), the state's decay over the chunk.
        for (uint32_t i = 0; i < nt; ++i) {
            tile_regs_acquire();
            gdn::copy_in(cb_gam, i, 0);
            gdn::exp_dst(0);
            gdn::pack_dst_push(cb_factors_out);
        }
        for (uint32_t i = 0; i < nt; ++i) {
            tile_regs_acquire();
            gdn::copy_in(cb_gam_last, 0, 0);
            gdn::copy_in(cb_gam, i, 1);
            gdn::sub_dst(0, 1, 0);
            gdn::exp_dst(0);
            gdn::pack_dst_push(cb_factors_out);
        }
        tile_regs_acquire();
        gdn::copy_in(cb_gam_last, 0, 0);
        gdn::exp_dst(0);
        gdn::pack_dst_push(cb_factors_out);

        cb_pop_front(cb_k, nt * key_tiles);
        cb_pop_front(cb_q, nt * key_tiles);
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
}
