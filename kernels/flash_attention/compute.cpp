// Flash-attention compute: causal online-softmax attention of a unit's R query tile-rows against the
// key blocks the reader streams, then O / l and the optional output gate.
//
// A unit is worked through in steps: (key block kb of width w key tiles) x (row group of rt rows,
// rho0 .. rho0 + rt). Each row keeps a shift m (the running max, lagging), a row sum l and an output O.
//
// Each unit starts with m = the row max over key tile 0 (seed_shift).
// Fast path:
//   P = exp(scale (Q K^T - m)) straight out of DST: the shift is one more k-step of the scores matmul
//   (the first, on bfp8 operands that unpack fast), -m (cb_m, -m in every column) against tiles of 1/32
//   (cb_spread), so S - m is formed in the fp32 accumulator and never packed; tiles that straddle the
//   diagonal start from a mask tile (0 / -inf) the matmul accumulates onto, tiles past it from the all
//   -inf one.
//   l_new = l + row sums of P: the packer adds each P tile (as it leaves DST) onto one partial-sum tile
//   per row with its L1 accumulation (the partial sums are bf16, set by the planner's CB format: they
//   restart every key block and l itself stays fp32), and one REDUCE_ROW per row and block finishes the
//   sums, so the row sums cost neither matrix-unit nor unpacker time per probability tile.
//   Overflow guard: the step is kept if no row's block sum l_new - l exceeds e^guard (read back from L1
//   with read_tile_value); m is not moved, so O and l need no rescaling. Scores that outgrow m by that
//   much are rare (m is a max of scores the row has seen); such a step is redone on the slow path.
//   O += P V: the product is packed onto O with the packer's L1 accumulation (fp32 add in the packer), so
//   O is never unpacked; the first output chunk's product waits in DST while the guard is read.
// Slow path (a step the guard rejected):
//   S = Q K^T (masked likewise) -> cb_s; the block's row max (reduce_tile MAX); m_new = max(m, block max);
//   -m_new as the matrix unit applies it (the same matmul against cb_spread) and
//   alpha = exp(scale (m_old - m_new)); P = exp(scale (S - m_new)); l = l * alpha + row sums of P;
//   O = O * alpha + P V, alpha applied on the SFPU to O copied exactly into DST (fp32 throughout).
//   alpha multiplies O and l as the same fp32 value, so its rounding cancels in O / l.
// Within a key block the row groups are software-pipelined (key_block): the next row group's scores
// are formed before this one's row sums and P V, so the matrix unit never waits for the packer.
// O (R x Dt tiles) stays in reserved pages of cb_o for the whole unit and is pushed for the final O / l.
// The running l lives in a rotating CB: each step pops the row group's old tiles from the front and
// pushes the new ones at the back, so the same order comes round again on the next key block. -m stays
// put in cb_m (R tiles, indexed by row) and is rebuilt only when a slow step moves it.
//
// Compile-time args: 0 Dt, 1 Bk, 2 hpu (query heads per unit), 3 scale as bf16 bits, 4 gated (1: out * sigmoid(gate)),
//                    5 guard: the largest block row sum the fast path accepts (fp32 bits)
// Runtime args: 0 p0, 1 sq, 2 Bq, 3 rt (rows per matmul block, 1 or 2; divides R = hpu * Bq),
//               4 ct_s (score tiles per DST block row), 5 ct_o (output tiles per DST block row),
//               6 number of units N, 7.. the units ((head group << 16) | query block), then N key-tile
//               counts: the key tiles the reader streams for each unit (a K/V sharing group streams the most
//               any of its units needs; the blocks past the unit's own are dropped unread)
// Circular buffers: see flash_attention_common.h.
#include <cstdint>

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/bcast.h"
#include "api/compute/matmul.h"
#include "api/compute/reduce.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/binary_max_min.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/recip.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/eltwise_unary/negative.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "flash_attention_common.h"

// tt-metal's JIT defines APPROX (the ComputeConfig's math_approx_mode) for the math and pack threads
// only; the unpack thread compiles the exp calls below too, as no-ops, so it gets a placeholder.
#if defined(UCK_CHLKC_UNPACK)
constexpr bool APPROX = false;
#endif

namespace {

constexpr uint32_t Dt = get_compile_time_arg_val(0);
constexpr uint32_t Bk = get_compile_time_arg_val(1);
constexpr uint32_t kHeadsPerUnit = get_compile_time_arg_val(2);
constexpr uint16_t kScaleBf16 = uint16_t(get_compile_time_arg_val(3));
constexpr bool kGated = get_compile_time_arg_val(4) != 0;
constexpr uint32_t kGuardBits = get_compile_time_arg_val(5);
// The same scale as fp32 bits, for the approximate exp's init.
constexpr uint32_t kScaleFp32Bits = uint32_t(kScaleBf16) << 16;
// DST tiles one tile_regs_acquire provides: half of DST, 4 fp32 or 8 bf16 tiles.
constexpr uint32_t kDstTiles = DST_ACCUM_MODE ? 4 : 8;
// Start of a block's row max: below any score (masked scores are -inf), finite.
constexpr float kMaxInit = -0x1p99f;

struct Geometry {
    uint32_t p0, sq, bq, rt, ct_s, ct_o, rows;
};

struct Step {
    uint32_t kb, rho0, width;
    bool first_block() const { return kb == 0; }
};

inline uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

float bits_to_float(uint32_t bits) {
    float f;
    __builtin_memcpy(&f, &bits, sizeof f);
    return f;
}

// Column 0, row `row` of an fp32 tile at the front of a CB.
float row_value(uint32_t cb, uint32_t tile, uint32_t row) {
    constexpr uint32_t kFace = 16;
    const uint32_t element = (row / kFace) * 2 * kFace * kFace + (row % kFace) * kFace;  // face 0 or 2, column 0
    return bits_to_float(read_tile_value(cb, tile, element));
}

// The same for a bf16 tile: two values per 32-bit word, the even element in the low half.
float bf16_row_value(uint32_t cb, uint32_t tile, uint32_t row) {
    constexpr uint32_t kFace = 16;
    const uint32_t element = (row / kFace) * 2 * kFace * kFace + (row % kFace) * kFace;  // even
    return bits_to_float(read_tile_value(cb, tile, element / 2) << 16);
}

// After tile_regs_commit: reserve `count` pages of cb, take DST for the packer, pack DST[0 .. count)
// into them in order, release DST and push the pages.
void pack_pages(uint32_t cb, uint32_t count) {
    cb_reserve_back(cb, count);
    tile_regs_wait();
    pack_reconfig_data_format(cb);
    for (uint32_t i = 0; i < count; ++i) pack_tile(i, cb);
    tile_regs_release();
    cb_push_back(cb, count);
}

// `count` tiles of `value` -> cb, made once. cb_spread (1/32) and cb_ones (1.0) are bfp8: exact for
// these values, and half a bf16 tile for the unpacker (they are operands of every shift k-step and
// every row-sum reduce).
void make_constant_tiles(uint32_t cb, uint32_t count, float value) {
    tile_regs_acquire();
    fill_tile_init();
    for (uint32_t i = 0; i < count; ++i) fill_tile(i, value);
    tile_regs_commit();
    pack_pages(cb, count);
}

// ---------------------------------------------------------------- partial row sums
// The probabilities in DST (rt rows x cols tiles, key tiles c0 .. c0 + cols of the block) are also
// packed onto the row group's partial-sum tiles in cb_psum with the packer's L1 accumulation: after
// the block, tile r holds the element-wise sum of row r's probability tiles (in cb_psum's format), and one
// REDUCE_ROW per row gives the block's row sums (row_sums). This keeps the row sums off the matrix
// unit and the unpacker (a P @ ones matmul costs a tile matmul per probability tile).

// DST[dst], the probabilities of key tile c of the block, onto row r's partial-sum tile; key tile 0
// overwrites it (no accumulation) to start the sum. The packer must be configured for cb_psum.
void pack_onto_partial_sum(uint32_t dst, uint32_t r, uint32_t c) {
    if (c != 0) pack_reconfig_l1_acc(1);
    pack_tile<true>(dst, fa::cb_psum, r);
    if (c != 0) pack_reconfig_l1_acc(0);
}

void pack_partial_sums(const Geometry& g, uint32_t cols, uint32_t c0) {
    pack_reconfig_data_format(fa::cb_psum);
    for (uint32_t r = 0; r < g.rt; ++r) {
        for (uint32_t c = 0; c < cols; ++c) pack_onto_partial_sum(r * cols + c, r, c0 + c);
    }
}

// ---------------------------------------------------------------- scores
// Q K^T for a row group and key block, rt x ct_s tiles per DST block, masked.
// Fast path (`fused`): one more k-step subtracts m, then exp -> P in cb_p. Otherwise S -> cb_s.
// In three parts (scores_begin, one scores_block per DST block of ct_s key tiles, scores_end) so
// that a fast step can interleave the blocks with the previous row group's P V (finish_step).
uint32_t score_blocks(const Geometry& g, const Step& s) { return (s.width + g.ct_s - 1) / g.ct_s; }

void scores_begin(const Geometry& g, bool fused) {
    cb_wait_front(fa::cb_k, Bk * Dt);
    if (fused) cb_wait_front(fa::cb_m, g.rows);
    cb_reserve_back(fused ? fa::cb_p : fa::cb_s, g.rt * Bk);
    if (fused) cb_reserve_back(fa::cb_psum, g.rt);
}

void scores_block(const Geometry& g, fa::Unit unit, const Step& s, bool fused, uint32_t block) {
    const uint32_t out_cb = fused ? fa::cb_p : fa::cb_s;
    {
        const uint32_t c0 = block * g.ct_s;
        const uint32_t cols = min_u32(g.ct_s, s.width - c0);
        tile_regs_acquire();
        // Masked tiles start from their mask tile (0 / -inf) and the matmul accumulates on top: exact,
        // where adding the mask afterwards would pass the scores through the FPU's operand format.
        bool mask_ready = false;
        for (uint32_t r = 0; r < g.rt; ++r) {
            const uint32_t q_tile = fa::row_q_tile(unit, s.rho0 + r, g.bq);
            for (uint32_t c = 0; c < cols; ++c) {
                const uint32_t mask = fa::mask_for(g.p0, q_tile, s.kb * Bk + c0 + c);
                if (mask == fa::kNoMask) continue;
                if (!mask_ready) {
                    reconfig_data_format_srca(fa::cb_mask);
                    copy_init(fa::cb_mask);
                    mask_ready = true;
                }
                copy_tile(fa::cb_mask, mask, r * cols + c);
            }
        }
        // The shift's k-step goes first: its operands are bfp8 (half a bf16 tile), so they unpack
        // quickly after the DST half is acquired, and the first Q K^T k-step unpacks during it.
        if (fused) {
            reconfig_data_format(fa::cb_spread, fa::cb_m);
            matmul_block_init(fa::cb_m, fa::cb_spread, /*transpose=*/0, cols, g.rt, 1);
            matmul_block(fa::cb_m, fa::cb_spread, s.rho0, 0, 0, /*transpose=*/0, cols, g.rt, 1);
        }
        reconfig_data_format(fa::cb_k, fa::cb_q);
        matmul_block_init(fa::cb_q, fa::cb_k, /*transpose=*/1, cols, g.rt, Dt);
        for (uint32_t d = 0; d < Dt; ++d) {
            matmul_block(fa::cb_q, fa::cb_k, s.rho0 * Dt + d, d * Bk + c0, 0, /*transpose=*/1, cols, g.rt, Dt);
        }
        tile_regs_commit();
        tile_regs_wait();
        // The exp runs on the pack thread, on the DST half the packer now holds: it overlaps the
        // matrix unit's next block (the other half) instead of following it on the math thread.
        if (fused) {
            exp_packthread_tile_init<APPROX, kScaleFp32Bits>();
            for (uint32_t i = 0; i < g.rt * cols; ++i) {
                exp_packthread_tile<APPROX, true>(i, VectorMode::RC, kScaleBf16);
            }
        }
        // The partial sums are packed first and pushed as soon as they are complete: the row sums need
        // only them, so they start while the block's last probabilities are still being packed.
        if (fused) pack_partial_sums(g, cols, c0);
        if (fused && c0 + cols == s.width) cb_push_back(fa::cb_psum, g.rt);
        pack_reconfig_data_format(out_cb);
        for (uint32_t r = 0; r < g.rt; ++r) {
            for (uint32_t c = 0; c < cols; ++c) pack_tile<true>(r * cols + c, out_cb, r * Bk + c0 + c);
        }
        tile_regs_release();
    }
}

void scores_end(const Geometry& g, bool fused) { cb_push_back(fused ? fa::cb_p : fa::cb_s, g.rt * Bk); }

void scores(const Geometry& g, fa::Unit unit, const Step& s, bool fused) {
    scores_begin(g, fused);
    for (uint32_t b = 0; b < score_blocks(g, s); ++b) scores_block(g, unit, s, fused, b);
    scores_end(g, fused);
}

// ---------------------------------------------------------------- slow path: row max, new shift, P
// The block's row max (column 0; the other columns kMaxInit) -> cb_bmax.
void block_max(const Geometry& g, const Step& s) {
    cb_wait_front(fa::cb_s, g.rt * Bk);
    tile_regs_acquire();
    fill_tile_init();
    for (uint32_t r = 0; r < g.rt; ++r) fill_tile(r, kMaxInit);
    reconfig_data_format(fa::cb_s, fa::cb_ones);
    reduce_init<PoolType::MAX, ReduceDim::REDUCE_ROW>(fa::cb_s, fa::cb_ones, fa::cb_bmax);
    for (uint32_t r = 0; r < g.rt; ++r) {
        for (uint32_t c = 0; c < s.width; ++c) {
            reduce_tile<PoolType::MAX, ReduceDim::REDUCE_ROW>(fa::cb_s, fa::cb_ones, r * Bk + c, 0, r);
        }
    }
    reduce_uninit();
    tile_regs_commit();
    pack_pages(fa::cb_bmax, g.rt);
}

// The shift state cb_m (R tiles, every row group) with row group rho0's tiles replaced by cb_m_new's:
// all R tiles go round through DST in order. Only after a slow step, which is rare.
void replace_shift_state(const Geometry& g, const Step& s) {
    cb_wait_front(fa::cb_m_new, g.rt);
    for (uint32_t rho0 = 0; rho0 < g.rows; rho0 += g.rt) {
        const uint32_t from = rho0 == s.rho0 ? fa::cb_m_new : fa::cb_m;
        tile_regs_acquire();
        reconfig_data_format_srca(from);
        copy_init(from);
        for (uint32_t r = 0; r < g.rt; ++r) copy_tile(from, r, r);
        tile_regs_commit();
        cb_pop_front(fa::cb_m, g.rt);
        pack_pages(fa::cb_m, g.rt);
    }
    cb_pop_front(fa::cb_m_new, g.rt);
}

// m_new = max(m_old, block max): -m_new broadcast over the row replaces -m_old in cb_m (stored in bf16:
// any shift works as long as every use reads the same stored value); -m_new as the matrix unit applies
// it -> cb_shift; alpha = exp(scale (m_old - m_new)) -> cb_alpha.
void new_shift(const Geometry& g, const Step& s) {
    cb_wait_front(fa::cb_bmax, g.rt);
    cb_wait_front(fa::cb_m, g.rows);
    // DST[r]: the row max broadcast (the max of FPU operands, so broadcasting it is exact), then -m_new.
    tile_regs_acquire();
    reconfig_data_format(fa::cb_ones, fa::cb_bmax);
    mul_bcast_cols_init(fa::cb_ones, fa::cb_bmax);
    for (uint32_t r = 0; r < g.rt; ++r) mul_tiles_bcast_cols(fa::cb_ones, fa::cb_bmax, 0, r, r);
    negative_tile_init();
    for (uint32_t r = 0; r < g.rt; ++r) negative_tile(r);
    reconfig_data_format_srca(fa::cb_m);
    copy_init(fa::cb_m);
    for (uint32_t r = 0; r < g.rt; ++r) copy_tile(fa::cb_m, s.rho0 + r, g.rt + r);
    binary_min_tile_init();  // -max(m_old, b) = min(-m_old, -b)
    for (uint32_t r = 0; r < g.rt; ++r) binary_min_tile(r, g.rt + r, r);
    tile_regs_commit();
    cb_pop_front(fa::cb_bmax, g.rt);
    pack_pages(fa::cb_m_new, g.rt);

    // DST[r]: -m_new through the matrix unit; DST[rt + r]: -m_old likewise, then alpha.
    cb_wait_front(fa::cb_m_new, g.rt);
    tile_regs_acquire();
    reconfig_data_format(fa::cb_spread, fa::cb_m_new);
    matmul_block_init(fa::cb_m_new, fa::cb_spread, /*transpose=*/0, 1, g.rt, 1);
    matmul_block(fa::cb_m_new, fa::cb_spread, 0, 0, 0, /*transpose=*/0, 1, g.rt, 1);
    reconfig_data_format(fa::cb_spread, fa::cb_m);
    matmul_block_init(fa::cb_m, fa::cb_spread, /*transpose=*/0, 1, g.rt, 1);
    matmul_block(fa::cb_m, fa::cb_spread, s.rho0, 0, g.rt, /*transpose=*/0, 1, g.rt, 1);
    sub_binary_tile_init();  // m_old - m_new = (-m_new) - (-m_old)
    for (uint32_t r = 0; r < g.rt; ++r) sub_binary_tile(r, g.rt + r, g.rt + r);
    exp_tile_init<APPROX, kScaleFp32Bits>();
    for (uint32_t r = 0; r < g.rt; ++r) exp_tile<APPROX, true>(g.rt + r, VectorMode::RC, kScaleBf16);
    tile_regs_commit();
    cb_reserve_back(fa::cb_shift, g.rt);
    cb_reserve_back(fa::cb_alpha, g.rt);
    tile_regs_wait();
    pack_reconfig_data_format(fa::cb_shift);
    for (uint32_t r = 0; r < g.rt; ++r) pack_tile(r, fa::cb_shift);
    for (uint32_t r = 0; r < g.rt; ++r) pack_tile(g.rt + r, fa::cb_alpha);
    tile_regs_release();
    cb_push_back(fa::cb_shift, g.rt);
    cb_push_back(fa::cb_alpha, g.rt);
    replace_shift_state(g, s);
}

// A unit's first shift, before its first key block: each row's max over key tile 0 (which every query
// sees), -m broadcast -> cb_m, row group by row group. Later blocks may outgrow it; the overflow guard
// of the fast path sends those to the slow path, which moves it.
void seed_shift(const Geometry& g, fa::Unit unit) {
    for (uint32_t rho0 = 0; rho0 < g.rows; rho0 += g.rt) {
        const Step first_tile{0, rho0, 1};
        scores(g, unit, first_tile, /*fused=*/false);
        block_max(g, first_tile);
        cb_pop_front(fa::cb_s, g.rt * Bk);
        cb_wait_front(fa::cb_bmax, g.rt);
        tile_regs_acquire();
        reconfig_data_format(fa::cb_ones, fa::cb_bmax);
        mul_bcast_cols_init(fa::cb_ones, fa::cb_bmax);
        for (uint32_t r = 0; r < g.rt; ++r) mul_tiles_bcast_cols(fa::cb_ones, fa::cb_bmax, 0, r, r);
        negative_tile_init();
        for (uint32_t r = 0; r < g.rt; ++r) negative_tile(r);
        tile_regs_commit();
        cb_pop_front(fa::cb_bmax, g.rt);
        pack_pages(fa::cb_m, g.rt);
    }
}

// P = exp(scale (S - m_new)) -> cb_p, on the SFPU against -m_new broadcast in DST[0]: S is copied into
// DST exactly (fp32), as the fast path forms S - m in the fp32 accumulator (going through the FPU would
// truncate large scores to the matrix unit's operand format). Copies run one tile ahead of the SFPU
// work so that unpacking overlaps it.
void probabilities(const Geometry& g, const Step& s) {
    constexpr uint32_t kPerAcquire = kDstTiles - 1;
    cb_wait_front(fa::cb_shift, g.rt);
    cb_reserve_back(fa::cb_p, g.rt * Bk);
    cb_reserve_back(fa::cb_psum, g.rt);
    pack_reconfig_data_format(fa::cb_p);
    for (uint32_t r = 0; r < g.rt; ++r) {
        for (uint32_t c0 = 0; c0 < s.width; c0 += kPerAcquire) {
            const uint32_t cols = min_u32(kPerAcquire, s.width - c0);
            tile_regs_acquire();
            reconfig_data_format_srca(fa::cb_shift);
            copy_init(fa::cb_shift);
            copy_tile(fa::cb_shift, r, 0);
            reconfig_data_format_srca(fa::cb_s);
            copy_init(fa::cb_s);
            copy_tile(fa::cb_s, r * Bk + c0, 1);
            for (uint32_t j = 0; j < cols; ++j) {
                if (j + 1 < cols) copy_tile(fa::cb_s, r * Bk + c0 + j + 1, 2 + j);
                add_binary_tile_init();
                add_binary_tile(1 + j, 0, 1 + j);
                exp_tile_init<APPROX, kScaleFp32Bits>();
                exp_tile<APPROX, true>(1 + j, VectorMode::RC, kScaleBf16);
            }
            tile_regs_commit();
            tile_regs_wait();
            for (uint32_t j = 0; j < cols; ++j) pack_tile<true>(1 + j, fa::cb_p, r * Bk + c0 + j);
            pack_reconfig_data_format(fa::cb_psum);
            for (uint32_t j = 0; j < cols; ++j) pack_onto_partial_sum(1 + j, r, c0 + j);
            pack_reconfig_data_format(fa::cb_p);
            tile_regs_release();
        }
    }
    cb_push_back(fa::cb_p, g.rt * Bk);
    cb_push_back(fa::cb_psum, g.rt);
    cb_pop_front(fa::cb_s, g.rt * Bk);
    cb_pop_front(fa::cb_shift, g.rt);
}

// ---------------------------------------------------------------- row sums
// l_old (* alpha) + the block's row sums, reduced from cb_psum (DST[r]: row r's sum; DST[rt + r]: its alpha) -> the reserved (not yet
// pushed) back pages of cb_l, and when `guarded` also -> cb_l_new for the overflow check. l_old stays
// at the front of cb_l until commit_sums, so a rejected step can be redone into the same pages.
void row_sums(const Geometry& g, const Step& s, bool rescale, bool guarded) {
    tile_regs_acquire();
    if (!s.first_block()) {
        cb_wait_front(fa::cb_l, g.rt);
        reconfig_data_format_srca(fa::cb_l);
        copy_init(fa::cb_l);
        for (uint32_t r = 0; r < g.rt; ++r) copy_tile(fa::cb_l, r, r);
        if (rescale) {
            cb_wait_front(fa::cb_alpha, g.rt);
            reconfig_data_format_srca(fa::cb_alpha);
            copy_init(fa::cb_alpha);
            for (uint32_t r = 0; r < g.rt; ++r) copy_tile(fa::cb_alpha, r, g.rt + r);
            mul_binary_tile_init();
            for (uint32_t r = 0; r < g.rt; ++r) mul_binary_tile(r, g.rt + r, r);
        }
    }
    cb_wait_front(fa::cb_psum, g.rt);
    reconfig_data_format(fa::cb_ones, fa::cb_psum);  // REDUCE_ROW SUM takes the scaler as srcA
    reduce_init<PoolType::SUM, ReduceDim::REDUCE_ROW>(fa::cb_psum, fa::cb_ones, fa::cb_l);
    for (uint32_t r = 0; r < g.rt; ++r) {
        reduce_tile<PoolType::SUM, ReduceDim::REDUCE_ROW>(fa::cb_psum, fa::cb_ones, r, 0, r);
    }
    reduce_uninit();
    cb_pop_front(fa::cb_psum, g.rt);
    tile_regs_commit();
    cb_reserve_back(fa::cb_l, g.rt);
    if (guarded) cb_reserve_back(fa::cb_l_new, g.rt);
    tile_regs_wait();
    // The guard's copy first: the guard waits for it, not for the state's.
    if (guarded) {
        pack_reconfig_data_format(fa::cb_l_new);
        for (uint32_t r = 0; r < g.rt; ++r) pack_tile(r, fa::cb_l_new);
        cb_push_back(fa::cb_l_new, g.rt);
    }
    pack_reconfig_data_format(fa::cb_l);
    for (uint32_t r = 0; r < g.rt; ++r) pack_tile<true>(r, fa::cb_l, r);
    tile_regs_release();
}

// The fast path's overflow guard: no row's block sum (l_new - l_old) above the guard (NaN fails too).
// l_new is read from its bf16 copy (half the packer time of an fp32 one, and the guard waits for it),
// so the guard is tightened by that copy's largest rounding error (below 2^-7 of it): a block the
// fp32 sums would put over the guard is never accepted. Consumes cb_l_new.
bool sums_within_guard(const Geometry& g, const Step& s) {
    cb_wait_front(fa::cb_l_new, g.rt);
    if (!s.first_block()) cb_wait_front(fa::cb_l, g.rt);
    const float guard = bits_to_float(kGuardBits);
    bool ok = true;
    for (uint32_t r = 0; r < g.rt && ok; ++r) {
        for (uint32_t row = 0; row < fa::kTileDim && ok; ++row) {
            const float old_sum = s.first_block() ? 0.0f : row_value(fa::cb_l, r, row);
            const float new_sum = bf16_row_value(fa::cb_l_new, r, row);
            ok = new_sum - old_sum <= guard - 0x1p-7f * new_sum;
        }
    }
    cb_pop_front(fa::cb_l_new, g.rt);
    return ok;
}

// The new sums replace the old ones in the rotating state.
void commit_sums(const Geometry& g, const Step& s) {
    if (!s.first_block()) cb_pop_front(fa::cb_l, g.rt);
    cb_push_back(fa::cb_l, g.rt);
}

// ---------------------------------------------------------------- O = O_old (* alpha) + P V -> cb_o
// The unit's output O (R x Dt fp32 tiles, row group after row group, chunk after chunk) stays in reserved
// pages of cb_o from the unit's start until finalize: a fast step adds P V onto it with the packer's L1
// accumulation, so O is never unpacked. That is why the overflow guard is checked before the update.

uint32_t output_tile(const Step& s, uint32_t chunk_index, uint32_t i, const Geometry& g) {
    return s.rho0 * Dt + chunk_index * g.rt * g.ct_o + i;
}

// The fast path: O += P V (the first block writes O) in pieces: output chunk n (rt x ct_o tiles) over
// key tiles k0 .. k1 of the block, formed in DST (product_piece) and packed onto O with the packer's
// L1 accumulation (accumulate_piece). A chunk is cut into several pieces when the next row group's
// score blocks are interleaved with them (finish_step): the packer's heavy work (exp, P and the
// partial sums of a score block) then alternates with the matrix unit's heavy work (P V), and DST's
// two halves keep both busy.
struct Piece {
    uint32_t chunk, k0, k1;
};

uint32_t output_chunks(const Geometry& g) { return (Dt + g.ct_o - 1) / g.ct_o; }

// Piece i of a step whose chunks are each cut into `parts` key ranges (chunk-major order).
Piece output_piece(const Step& s, uint32_t parts, uint32_t i) {
    const uint32_t part = i % parts;
    return Piece{i / parts, part * s.width / parts, (part + 1) * s.width / parts};
}

void product_piece(const Geometry& g, const Piece& piece) {
    tile_regs_acquire();
    reconfig_data_format(fa::cb_v, fa::cb_p);
    matmul_block_init(fa::cb_p, fa::cb_v, /*transpose=*/0, g.ct_o, g.rt, Bk);
    for (uint32_t k = piece.k0; k < piece.k1; ++k) {
        matmul_block(fa::cb_p, fa::cb_v, k, k * Dt + piece.chunk * g.ct_o, 0, /*transpose=*/0, g.ct_o, g.rt, Bk);
    }
    tile_regs_commit();
}

void accumulate_piece(const Geometry& g, const Step& s, const Piece& piece) {
    const bool overwrite = s.first_block() && piece.k0 == 0;  // the unit's first product of this chunk
    tile_regs_wait();
    pack_reconfig_data_format(fa::cb_o);
    if (!overwrite) pack_reconfig_l1_acc(1);
    for (uint32_t i = 0; i < g.rt * g.ct_o; ++i) pack_tile<true>(i, fa::cb_o, output_tile(s, piece.chunk, i, g));
    if (!overwrite) pack_reconfig_l1_acc(0);
    tile_regs_release();
}

// Slow path: output chunk `chunk_index` of the row group times alpha -> cb_o_tmp (exact fp32, on the
// SFPU); O must be readable (pushed) at the front of cb_o.
void rescale_chunk(const Geometry& g, const Step& s, uint32_t chunk_index) {
    constexpr uint32_t kPerAcquire = kDstTiles - 1;  // one DST tile holds alpha
    pack_reconfig_data_format(fa::cb_o_tmp);
    for (uint32_t r = 0; r < g.rt; ++r) {
        for (uint32_t c0 = 0; c0 < g.ct_o; c0 += kPerAcquire) {
            const uint32_t cols = min_u32(kPerAcquire, g.ct_o - c0);
            tile_regs_acquire();
            reconfig_data_format_srca(fa::cb_alpha);
            copy_init(fa::cb_alpha);
            copy_tile(fa::cb_alpha, r, 0);
            reconfig_data_format_srca(fa::cb_o);
            copy_init(fa::cb_o);
            for (uint32_t j = 0; j < cols; ++j) {
                copy_tile(fa::cb_o, output_tile(s, chunk_index, r * g.ct_o + c0 + j, g), 1 + j);
            }
            mul_binary_tile_init();
            for (uint32_t j = 0; j < cols; ++j) mul_binary_tile(1 + j, 0, 1 + j);
            tile_regs_commit();
            cb_reserve_back(fa::cb_o_tmp, cols);
            tile_regs_wait();
            for (uint32_t j = 0; j < cols; ++j) pack_tile(1 + j, fa::cb_o_tmp);
            tile_regs_release();
            cb_push_back(fa::cb_o_tmp, cols);
        }
    }
}

// Slow path: O = O * alpha + P V for the row group (the first block: O = P V), chunk by chunk. To read
// a chunk of O the unit's output pages are pushed; its rescaled copy goes to cb_o_tmp and the pages are
// popped and reserved again (only the counters move: the tiles stay where they are in L1 and nothing
// else writes them), so P V plus the rescaled chunk can be packed over the old chunk.
void rescale_and_update_output(const Geometry& g, const Step& s, bool rescale) {
    const uint32_t chunk = g.rt * g.ct_o;
    const uint32_t all = g.rows * Dt;
    cb_wait_front(fa::cb_p, g.rt * Bk);
    cb_wait_front(fa::cb_v, Bk * Dt);
    if (rescale) cb_wait_front(fa::cb_alpha, g.rt);
    for (uint32_t c0 = 0, n = 0; c0 < Dt; c0 += g.ct_o, ++n) {
        if (rescale) {
            cb_push_back(fa::cb_o, all);
            cb_wait_front(fa::cb_o, all);
            rescale_chunk(g, s, n);
            cb_pop_front(fa::cb_o, all);
            cb_reserve_back(fa::cb_o, all);
        }
        tile_regs_acquire();
        if (rescale) {
            cb_wait_front(fa::cb_o_tmp, chunk);
            reconfig_data_format_srca(fa::cb_o_tmp);
            copy_init(fa::cb_o_tmp);
            for (uint32_t i = 0; i < chunk; ++i) copy_tile(fa::cb_o_tmp, i, i);
            cb_pop_front(fa::cb_o_tmp, chunk);
        }
        reconfig_data_format(fa::cb_v, fa::cb_p);
        matmul_block_init(fa::cb_p, fa::cb_v, /*transpose=*/0, g.ct_o, g.rt, Bk);
        for (uint32_t k = 0; k < s.width; ++k) {
            matmul_block(fa::cb_p, fa::cb_v, k, k * Dt + c0, 0, /*transpose=*/0, g.ct_o, g.rt, Bk);
        }
        tile_regs_commit();
        tile_regs_wait();
        pack_reconfig_data_format(fa::cb_o);
        for (uint32_t i = 0; i < chunk; ++i) pack_tile<true>(i, fa::cb_o, output_tile(s, n, i, g));
        tile_regs_release();
    }
}

// ---------------------------------------------------------------- a step
void slow_step(const Geometry& g, fa::Unit unit, const Step& s) {
    const bool rescale = !s.first_block();  // nothing to rescale before the first block
    scores(g, unit, s, /*fused=*/false);
    block_max(g, s);
    new_shift(g, s);
    probabilities(g, s);
    row_sums(g, s, rescale, /*guarded=*/false);
    commit_sums(g, s);
    rescale_and_update_output(g, s, rescale);
    cb_pop_front(fa::cb_p, g.rt * Bk);
    cb_pop_front(fa::cb_alpha, g.rt);
}

// Key blocks of at least this many key tiles interleave the next row group's score blocks with the
// current one's P V (finish_step): a score block keeps the packer busy for ~670 cycles (exp, P and
// partial sums of 4 tiles), and a piece of P V (2 x 2 output tiles) takes the matrix unit 128 cycles
// (HiFi2) per key tile, so pieces of 6+ key tiles let the packer catch up behind each one.
constexpr uint32_t kMinPieceKeys = 6;

bool interleaved(uint32_t width) { return width >= 2 * kMinPieceKeys; }

// The rest of a step whose scores are done: row sums, overflow guard, O update, and the next row
// group's scores (`next`, or null: the last row group of the key block). The row groups of a key
// block are software-pipelined, so that the packer's work on one row group's probabilities overlaps
// the matrix unit's work on another (cb_p and cb_psum hold two row groups, this one's at the front):
// * wide key blocks (interleaved): score block b of the next row group is followed by this row
//   group's P V pieces up to (b + 1) / blocks of them; the step ends with a piece (light for the
//   packer), so the next step's guard finds the packer nearly caught up;
// * narrow ones: the next row group's scores were formed before this call (`next_formed`).
// The first piece of P V is formed in DST before the guard is read (so the matmuls overlap the
// packing of the sums it waits for) and packed onto O only if the guard passes. A rejected step
// drops it from DST, drops the next row group's probabilities if they are formed (the slow path needs
// cb_p and cb_psum to itself), is redone on the slow path, and then the next row group's scores are
// formed on their own (same shift: the row groups' shifts are independent).
void finish_step(const Geometry& g, fa::Unit unit, const Step& s, const Step* next, bool next_formed) {
    row_sums(g, s, /*rescale=*/false, /*guarded=*/true);
    cb_wait_front(fa::cb_p, g.rt * Bk);
    cb_wait_front(fa::cb_v, Bk * Dt);
    const bool interleave = next != nullptr && !next_formed;
    const uint32_t blocks = interleave ? score_blocks(g, *next) : 0;
    const uint32_t parts = interleave ? s.width / kMinPieceKeys : 1;
    const uint32_t pieces = output_chunks(g) * parts;
    product_piece(g, output_piece(s, parts, 0));
    if (!sums_within_guard(g, s)) {
        tile_regs_wait();
        tile_regs_release();
        cb_pop_front(fa::cb_p, g.rt * Bk);
        if (next != nullptr && next_formed) {
            cb_wait_front(fa::cb_p, g.rt * Bk);
            cb_pop_front(fa::cb_p, g.rt * Bk);
            cb_wait_front(fa::cb_psum, g.rt);
            cb_pop_front(fa::cb_psum, g.rt);
        }
        slow_step(g, unit, s);
        if (next != nullptr) scores(g, unit, *next, /*fused=*/true);
        return;
    }
    commit_sums(g, s);
    accumulate_piece(g, s, output_piece(s, parts, 0));
    uint32_t done = 1;
    if (interleave) {
        scores_begin(g, /*fused=*/true);
        for (uint32_t b = 0; b < blocks; ++b) {
            scores_block(g, unit, *next, /*fused=*/true, b);
            for (const uint32_t until = 1 + (b + 1) * (pieces - 1) / blocks; done < until; ++done) {
                const Piece piece = output_piece(s, parts, done);
                product_piece(g, piece);
                accumulate_piece(g, s, piece);
            }
        }
    }
    for (; done < pieces; ++done) {
        const Piece piece = output_piece(s, parts, done);
        product_piece(g, piece);
        accumulate_piece(g, s, piece);
    }
    cb_pop_front(fa::cb_p, g.rt * Bk);
    if (interleave) scores_end(g, /*fused=*/true);
}

// One key block against every row group of the unit, pipelined as finish_step describes (the
// pipeline drains at the end of the block: the last row group may still need this K block for a
// slow step, and the next block's K sits behind it in cb_k).
void key_block(const Geometry& g, fa::Unit unit, uint32_t kb, uint32_t width) {
    const bool interleave = interleaved(width);
    Step pending{kb, 0, width};
    scores(g, unit, pending, /*fused=*/true);
    for (uint32_t rho0 = g.rt; rho0 < g.rows; rho0 += g.rt) {
        const Step next{kb, rho0, width};
        if (!interleave) scores(g, unit, next, /*fused=*/true);
        finish_step(g, unit, pending, &next, /*next_formed=*/!interleave);
        pending = next;
    }
    finish_step(g, unit, pending, nullptr, /*next_formed=*/false);
}

// ---------------------------------------------------------------- out = O / l (* sigmoid(gate))
// For rows rho0 .. rho0 + rt; drops the unit's l for those rows.
void finalize_rows(const Geometry& g) {
    cb_wait_front(fa::cb_l, g.rt);
    tile_regs_acquire();
    reconfig_data_format_srca(fa::cb_l);
    copy_init(fa::cb_l);
    for (uint32_t r = 0; r < g.rt; ++r) copy_tile(fa::cb_l, r, r);
    // Only column 0 of 1/l is read (a column broadcast below), so the reciprocal runs on the left faces.
    recip_tile_init();
    for (uint32_t r = 0; r < g.rt; ++r) recip_tile(r, VectorMode::C);
    tile_regs_commit();
    cb_pop_front(fa::cb_l, g.rt);
    pack_pages(fa::cb_l_inv, g.rt);

    cb_wait_front(fa::cb_l_inv, g.rt);
    const uint32_t chunk = g.rt * g.ct_o;
    // Ungated: every DST tile holds an output tile; gated: pairs of (output, gate) tiles.
    const uint32_t per_acquire = kGated ? kDstTiles / 2 : kDstTiles;
    const uint32_t stride = kGated ? 2 : 1;
    for (uint32_t c0 = 0; c0 < Dt; c0 += g.ct_o) {
        cb_wait_front(fa::cb_o, chunk);
        if (kGated) cb_wait_front(fa::cb_gate, chunk);
        for (uint32_t i0 = 0; i0 < chunk; i0 += per_acquire) {
            const uint32_t count = min_u32(per_acquire, chunk - i0);
            tile_regs_acquire();
            reconfig_data_format(fa::cb_o, fa::cb_l_inv);
            mul_bcast_cols_init(fa::cb_o, fa::cb_l_inv);
            for (uint32_t j = 0; j < count; ++j) {
                const uint32_t i = i0 + j;
                mul_tiles_bcast_cols(fa::cb_o, fa::cb_l_inv, i, i / g.ct_o, j * stride);
            }
            if constexpr (kGated) {
                reconfig_data_format_srca(fa::cb_gate);
                copy_init(fa::cb_gate);
                for (uint32_t j = 0; j < count; ++j) copy_tile(fa::cb_gate, i0 + j, 2 * j + 1);
                sigmoid_tile_init();
                for (uint32_t j = 0; j < count; ++j) sigmoid_tile(2 * j + 1);
                mul_binary_tile_init();
                for (uint32_t j = 0; j < count; ++j) mul_binary_tile(2 * j, 2 * j + 1, 2 * j);
            }
            tile_regs_commit();
            cb_reserve_back(fa::cb_out, count);
            tile_regs_wait();
            pack_reconfig_data_format(fa::cb_out);
            for (uint32_t j = 0; j < count; ++j) pack_tile(j * stride, fa::cb_out);
            tile_regs_release();
            cb_push_back(fa::cb_out, count);
        }
        cb_pop_front(fa::cb_o, chunk);
        if (kGated) cb_pop_front(fa::cb_gate, chunk);
    }
    cb_pop_front(fa::cb_l_inv, g.rt);
}

}  // namespace

void kernel_main() {
    Geometry g;
    g.p0 = get_arg_val<uint32_t>(0);
    g.sq = get_arg_val<uint32_t>(1);
    g.bq = get_arg_val<uint32_t>(2);
    g.rt = get_arg_val<uint32_t>(3);
    g.ct_s = get_arg_val<uint32_t>(4);
    g.ct_o = get_arg_val<uint32_t>(5);
    const uint32_t num_units = get_arg_val<uint32_t>(6);
    constexpr uint32_t kFirstUnitArg = 7;
    const uint32_t rows = kHeadsPerUnit * g.bq;
    g.rows = rows;

    compute_kernel_hw_startup(fa::cb_q, fa::cb_k, fa::cb_s);
    make_constant_tiles(fa::cb_spread, g.ct_s, 0x1p-5f);
    make_constant_tiles(fa::cb_ones, 1, 1.0f);
    cb_wait_front(fa::cb_mask, fa::kNumMaskTiles);
    cb_wait_front(fa::cb_ones, 1);
    cb_wait_front(fa::cb_spread, g.ct_s);

    for (uint32_t n = 0; n < num_units; ++n) {
        const fa::Unit unit = fa::decode_unit(get_arg_val<uint32_t>(kFirstUnitArg + n));
        const uint32_t key_tiles = fa::unit_key_tiles(unit.q_block, g.bq, g.p0, g.sq);
        const uint32_t key_blocks = (key_tiles + Bk - 1) / Bk;
        cb_wait_front(fa::cb_q, rows * Dt);
        cb_reserve_back(fa::cb_o, rows * Dt);  // the unit's output, accumulated in place
        seed_shift(g, unit);
        for (uint32_t kb = 0; kb < key_blocks; ++kb) {
            const uint32_t width = fa::block_width(kb, key_tiles, Bk);
            key_block(g, unit, kb, width);
            cb_pop_front(fa::cb_k, Bk * Dt);
            cb_pop_front(fa::cb_v, Bk * Dt);
        }
        const uint32_t streamed_blocks = (get_arg_val<uint32_t>(kFirstUnitArg + num_units + n) + Bk - 1) / Bk;
        for (uint32_t kb = key_blocks; kb < streamed_blocks; ++kb) {
            cb_wait_front(fa::cb_k, Bk * Dt);
            cb_wait_front(fa::cb_v, Bk * Dt);
            cb_pop_front(fa::cb_k, Bk * Dt);
            cb_pop_front(fa::cb_v, Bk * Dt);
        }
        cb_pop_front(fa::cb_q, rows * Dt);
        cb_push_back(fa::cb_o, rows * Dt);
        for (uint32_t rho0 = 0; rho0 < rows; rho0 += g.rt) finalize_rows(g);
        cb_wait_front(fa::cb_m, rows);
        cb_pop_front(fa::cb_m, rows);
    }
}
