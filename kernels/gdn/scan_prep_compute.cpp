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
//      scratch c_7 inverse running blocks (2 x kInverseLanes), c_8 masked A tiles, c_9 product tiles
//      (kInverseLanes each), c_10 per-row factors (nt), c_24 gam (nt), c_25 gam transposed (nt), c_26 gam_last (1),
//      c_27 decay (nt(nt+1)/2), c_28 A (nt(nt+1)/2), c_29 T (nt(nt+1)/2), c_30 right-hand sides
//      (nt * (KT + VT)), all fp32;
//      outputs c_16 records (to the writer), c_17 factor tiles (fp32; holds a chunk's, since the
//      exp(gam) tiles are pushed ahead of the records' -W and U).
#include "api/compute/compute_kernel_hw_startup.h"
#include "scan_prep_chunk.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    constexpr uint32_t cb_factors_out = tt::CBIndex::c_17;
    const uint32_t nt = get_common_arg_val<uint32_t>(0);
    const uint32_t key_tiles = get_common_arg_val<uint32_t>(1);
    const uint32_t value_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t num_units = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(gdn::prep::cb_k, gdn::prep::cb_k, cb_out);
    cb_wait_front(gdn::prep::cb_consts, gdn::kNumConsts);
    // The whole record (P, -W, U) goes out through one CB, in the order the writer expects.
    const gdn::prep::PrepOutputs out{cb_out, cb_out, cb_out, cb_factors_out};
    for (uint32_t unit = 0; unit < num_units; ++unit) {
        gdn::prep::prepare_chunk(out, nt, key_tiles, value_tiles, false);
    }
}
