// GDN sequential pass, compute: the state-dependent part of the chunked form (shared/GDN.md) for one
// value head and a block of VBT value columns, chunk after chunk, with the fp32 state block h
// (K x 32 VBT) kept in L1 for the whole sequence. From the chunk's preparation (scan_prep_chunk.h:
// P, T~ = T diag(beta), -T^ = -T diag(beta exp(gam))) and gate vectors (gate_vectors.h):
//     kh   = k h
//     Vnew = T~ v + (-T^) kh                      (= U - W h, regrouped)
//     O    = q~ h + P Vnew,   q~ = diag(exp(gam)) q
//     h   <- exp(last) h + K~^T Vnew,   K~^T = K^T diag(exp(last - gam))
// q, k, v and K^T (a transpose of the bf16 k tiles, exact) enter the matmuls exact; h, kh, Vnew and
// the preparation's products as TF32. The row and column factors are SFPU broadcasts in fp32 DST, the
// state decay an SFPU product with the scalar exp(last), and the matmuls accumulate on top in fp32.
// Matmuls run in blocks of up to 2 x 2 output tiles where the operands allow, so the unpacker reuses
// each tile across a block's rows or columns (fp32 operands cost twice a bf16 one to unpack).
//
// With GDN_SCAN_FUSED defined this is the fused scan: each unit is a whole value head (VBT = VT), and
// before each chunk the kernel runs the chunk preparation itself (scan_prep_chunk.h), so P, T~ and -T^
// never leave L1; only q, k, v and the gate vectors are read (by scan_prep_reader.cpp in its fused
// mode). CB indices of that mode are listed at their definitions below. Helper cores may prepare a
// share of the chunks instead (scan_offload.h); their records arrive in c_22.
//
// Compile-time args: none.
// Common runtime args: 0 tiles per chunk (nt), 1 key tiles (KT), 2 value tiles per block (VBT),
//   3 chunks, 4 number of checkpoints, 5.. the chunk index after which each checkpoint is taken
//   (ascending); fused scan: then the offload numerator and denominator (scan_offload.h; 0 / 1 when no
//   helper cores run).
// Runtime args: 0 number of units.
// CBs (two-program form): inputs c_0 T~ and -T^ interleaved (tile 2t and 2t + 1 for tri index t), c_2 q,
//      c_3 P (with GDN_SEQ_PIPELINED whole records, P then the pairs, and no c_0), c_4 k (nt x KT), c_5 gate
//      vectors, c_6 initial state block (KT x VBT, fp32), c_7 v block
//      (nt x VBT); scratch c_24 state (2 x KT x VBT), c_25 Vnew, c_26 kh (nt x VBT), c_27 K~^T
//      (KT x nt), c_28 q~ (nt x KT), all fp32; outputs c_16 O tiles (a chunk's, packed in 2 x 2 blocks),
//      c_17 state blocks (checkpoints, then the final state).
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/sfpu_binary_bcast.h"
#include "api/debug/kernel_profiler.hpp"
#include "gate_vectors.h"
#include "gdn_compute.h"
#ifdef GDN_SCAN_FUSED
#include "scan_offload.h"
#include "scan_prep_chunk.h"
#endif

namespace {
#ifdef GDN_SCAN_FUSED
// The fused scan: the preparation's CBs (scan_prep_chunk.h) plus its products in L1, which this
// kernel produces and consumes itself; q, k and the gate vectors are the preparation's own inputs.
constexpr uint32_t cb_k = gdn::prep::cb_k;
constexpr uint32_t cb_q = gdn::prep::cb_q;
constexpr uint32_t cb_v = tt::CBIndex::c_2;
constexpr uint32_t cb_vec = gdn::prep::cb_vec;
constexpr uint32_t cb_p = tt::CBIndex::c_11;
constexpr uint32_t cb_t_beta = tt::CBIndex::c_12;
constexpr uint32_t cb_neg_t_beta_exp = tt::CBIndex::c_13;
constexpr uint32_t cb_state_in = tt::CBIndex::c_15;
constexpr uint32_t cb_o = tt::CBIndex::c_16;
constexpr uint32_t cb_state_out = tt::CBIndex::c_17;
constexpr uint32_t cb_h = tt::CBIndex::c_18;
constexpr uint32_t cb_vnew = tt::CBIndex::c_19;
constexpr uint32_t cb_kh = tt::CBIndex::c_20;
constexpr uint32_t cb_kt = tt::CBIndex::c_21;
constexpr uint32_t cb_qt = tt::CBIndex::c_23;
// A record prepared by a helper core (scan_offload.h): P, then T~ and -T^ interleaved.
constexpr uint32_t cb_record = tt::CBIndex::c_22;
#else
constexpr uint32_t cb_t_beta = tt::CBIndex::c_0;
constexpr uint32_t cb_neg_t_beta_exp = tt::CBIndex::c_0;
constexpr uint32_t cb_q = tt::CBIndex::c_2;
constexpr uint32_t cb_p = tt::CBIndex::c_3;
constexpr uint32_t cb_k = tt::CBIndex::c_4;
constexpr uint32_t cb_vec = tt::CBIndex::c_5;
constexpr uint32_t cb_state_in = tt::CBIndex::c_6;
constexpr uint32_t cb_v = tt::CBIndex::c_7;
constexpr uint32_t cb_o = tt::CBIndex::c_16;
constexpr uint32_t cb_state_out = tt::CBIndex::c_17;
constexpr uint32_t cb_h = tt::CBIndex::c_24;
constexpr uint32_t cb_vnew = tt::CBIndex::c_25;
constexpr uint32_t cb_kh = tt::CBIndex::c_26;
constexpr uint32_t cb_kt = tt::CBIndex::c_27;
constexpr uint32_t cb_qt = tt::CBIndex::c_28;
#endif

// Where a chunk's P, T~ and -T^ are: three CBs of their own (the fused scan's own preparation), or a
// record with P first and then T~ and -T^ interleaved tile by tile (scan_prep_chunk.h pushes them in
// pairs), from DRAM (two-program form) or from a helper core (scan_offload.h).
struct RecordView {
    uint32_t cb_p, cb_t_beta, cb_neg_t_beta_exp;
    uint32_t t_beta_first, neg_t_beta_exp_first, stride;
    uint32_t p(uint32_t t) const { return t; }
    uint32_t t_beta(uint32_t t) const { return t_beta_first + stride * t; }
    uint32_t neg_t_beta_exp(uint32_t t) const { return neg_t_beta_exp_first + stride * t; }
    // Apply op (cb_wait_front or cb_pop_front) to each CB the record lives in, with its tile count.
    template <typename Op>
    void each_cb(uint32_t ntri, Op op) const {
        if (cb_p == cb_t_beta) {
            op(cb_p, 3 * ntri);
        } else if (cb_t_beta == cb_neg_t_beta_exp) {
            op(cb_p, ntri);
            op(cb_t_beta, 2 * ntri);
        } else {
            op(cb_p, ntri);
            op(cb_t_beta, ntri);
            op(cb_neg_t_beta_exp, ntri);
        }
    }
    void wait_record(uint32_t ntri) const { each_cb(ntri, [](uint32_t cb, uint32_t n) { cb_wait_front(cb, n); }); }
    void pop_record(uint32_t ntri) const { each_cb(ntri, [](uint32_t cb, uint32_t n) { cb_pop_front(cb, n); }); }
};

// Common runtime arg holding the first checkpoint's chunk index.
constexpr uint32_t kFirstCheckpointArg = 5;
// Steps that scale by a vector keep it in the last DST slot and work on narrower blocks.
constexpr uint32_t kVectorDst = gdn::kDstTiles - 1;

inline uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

// Copy `count` tiles of cb (at its front) into cb_dst, up to kDstTiles at a time.
void copy_block(uint32_t cb, uint32_t cb_dst, uint32_t count) {
    for (uint32_t t = 0; t < count; t += gdn::kDstTiles) {
        const uint32_t n = min_u32(gdn::kDstTiles, count - t);
        tile_regs_acquire();
        reconfig_data_format_srca(cb);
        copy_init(cb);
        for (uint32_t i = 0; i < n; ++i) copy_tile(cb, t + i, i);
        gdn::pack_dst_push(cb_dst, n);
    }
}

// Pack DST[0 .. rows x cols) to the reserved (not yet pushed) region of cb, DST tile r * cols + c to
// page (row0 + r) * row_pages + col0 + c.
void pack_block_at(uint32_t cb, uint32_t rows, uint32_t cols, uint32_t row0, uint32_t col0, uint32_t row_pages) {
    tile_regs_commit();
    tile_regs_wait();
    pack_reconfig_data_format(cb);
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < cols; ++c) pack_tile<true>(r * cols + c, cb, (row0 + r) * row_pages + col0 + c);
    }
    tile_regs_release();
}

// kh = k h in 2 x 2 blocks, one block per run_one, into cb_kh's reserved chunk. The first job waits for
// the state: the previous chunk's update is still being packed while the jobs before it run.
struct KhJobs {
    uint32_t nt, key_tiles, block_tiles;
    uint32_t r0 = 0, c0 = 0;
    bool run_one() {
        if (r0 >= nt) return false;
        if (r0 == 0 && c0 == 0) cb_wait_front(cb_h, key_tiles * block_tiles);
        const uint32_t rn = min_u32(2, nt - r0), cn = min_u32(2, block_tiles - c0);
        tile_regs_acquire();
        gdn::matmul_start(cb_k, cb_h);
        for (uint32_t kt = 0; kt < key_tiles; ++kt) {
            matmul_block(cb_k, cb_h, r0 * key_tiles + kt, kt * block_tiles + c0, 0, 0, cn, rn, key_tiles);
        }
        pack_block_at(cb_kh, rn, cn, r0, c0, block_tiles);
        c0 += 2;
        if (c0 >= block_tiles) c0 = 0, r0 += 2;
        return true;
    }
};

// The token-scaled key and query tiles, up to kVectorDst per run_one, into the reserved region of their
// CB (fp32), for one token tile I (a chunk row) at a time:
//   K~^T (keys): tile (kt, I) = transpose(k(I, kt)) * exp(last - gam) along its columns (tokens), a
//        row broadcast, at kt * nt + I of cb_kt: the left operand of the state update;
//   q~ (queries): tile (I, kt) = q(I, kt) * exp(gam) along its rows, a column broadcast, at
//        I * KT + kt of cb_qt: the left operand of O's q h, so O runs in 2 x 2 blocks with no DST slot
//        kept for the factor.
struct ScaledTileJobs {
    bool keys;
    uint32_t nt, key_tiles;
    uint32_t i = 0, kt0 = 0;
    bool run_one() {
        if (i >= nt) return false;
        const uint32_t n = min_u32(kVectorDst, key_tiles - kt0);
        const uint32_t cb_out = keys ? cb_kt : cb_qt;
        tile_regs_acquire();
        // One unpacker set-up for the job's tiles (an init per tile would cost more than the copy).
        if (keys) {
            reconfig_data_format_srca(cb_k);
            transpose_init(cb_k);
            for (uint32_t x = 0; x < n; ++x) transpose_tile(cb_k, i * key_tiles + kt0 + x, x);
        } else {
            reconfig_data_format_srca(cb_q);
            copy_init(cb_q);
            for (uint32_t x = 0; x < n; ++x) copy_tile(cb_q, i * key_tiles + kt0 + x, x);
        }
        if (keys) {
            gdn::copy_in(cb_vec, gdn::gv::at(gdn::gv::kToLast, i, nt), kVectorDst);
            sfpu_bcast_row_init();
            for (uint32_t x = 0; x < n; ++x) sfpu_mul_bcast_row(x, kVectorDst);
        } else {
            gdn::transpose_in(cb_vec, gdn::gv::at(gdn::gv::kExpGam, i, nt), kVectorDst);
            sfpu_bcast_col_init();
            for (uint32_t x = 0; x < n; ++x) sfpu_mul_bcast_col(x, kVectorDst);
        }
        tile_regs_commit();
        tile_regs_wait();
        pack_reconfig_data_format(cb_out);
        for (uint32_t x = 0; x < n; ++x) {
            pack_tile<true>(x, cb_out, keys ? (kt0 + x) * nt + i : i * key_tiles + kt0 + x);
        }
        tile_regs_release();
        kt0 += kVectorDst;
        if (kt0 >= key_tiles) kt0 = 0, ++i;
        return true;
    }
};
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
    const uint32_t vec_tiles = gdn::gv::kinds(nt) * nt;
#ifdef GDN_SCAN_FUSED
    // Chunks whose preparation a helper core does (scan_offload.h).
    const uint32_t offload_num = get_common_arg_val<uint32_t>(kFirstCheckpointArg + num_checkpoints);
    const uint32_t offload_den = get_common_arg_val<uint32_t>(kFirstCheckpointArg + num_checkpoints + 1);
    const RecordView local_view{cb_p, cb_t_beta, cb_neg_t_beta_exp, 0, 0, 1};
    const RecordView helper_view{cb_record, cb_record, cb_record, ntri, ntri + 1, 2};
#elif defined(GDN_SEQ_PIPELINED)
    // The pipelined scan: whole records in c_3, sent by the preparing cores (scan_pipeline.h).
    const RecordView record_view{cb_p, cb_p, cb_p, ntri, ntri + 1, 2};
#else
    const RecordView record_view{cb_p, cb_t_beta, cb_neg_t_beta_exp, 0, 1, 2};
#endif

    compute_kernel_hw_startup(cb_k, cb_h, cb_o);
#ifdef GDN_SCAN_FUSED
    cb_wait_front(gdn::prep::cb_consts, gdn::kNumConsts);
    const gdn::prep::PrepOutputs records{cb_p, cb_t_beta, cb_neg_t_beta_exp};
#endif

    for (uint32_t unit = 0; unit < num_units; ++unit) {
        cb_wait_front(cb_state_in, state_tiles);
        copy_block(cb_state_in, cb_h, state_tiles);
        cb_pop_front(cb_state_in, state_tiles);
        uint32_t next_checkpoint = 0;

        for (uint32_t c = 0; c < num_chunks; ++c) {
            cb_wait_front(cb_k, nt * key_tiles);
            cb_wait_front(cb_vec, vec_tiles);
            cb_wait_front(cb_q, nt * key_tiles);
            // The products that need neither the preparation nor v: k h, K~^T and q~. In the fused
            // scan they fill the waits of the preparation's inverse (scan_prep_chunk.h). Each step
            // below starts with work that does not need what the step before it is still packing
            // (K~^T before k h, q~ after it, O's q~ h before its P Vnew), so the pipeline never drains.
            cb_reserve_back(cb_kh, chunk_tiles);
            cb_reserve_back(cb_kt, key_tiles * nt);
            cb_reserve_back(cb_qt, key_tiles * nt);
            KhJobs kh_jobs{nt, key_tiles, block_tiles};
            ScaledTileJobs kt_jobs{true, nt, key_tiles};
            ScaledTileJobs qt_jobs{false, nt, key_tiles};
#ifdef GDN_SCAN_FUSED
            const bool remote = offload_num && gdn::offload::offloaded(c, offload_num, offload_den);
            const RecordView& rec = remote ? helper_view : local_view;
            if (!remote) {
                gdn::prep::PJobs p_jobs{nt, key_tiles, cb_p};
                auto fill = [&]() {
                    return p_jobs.run_one() || kt_jobs.run_one() || kh_jobs.run_one() || qt_jobs.run_one();
                };
                // k h is FPU work: its blocks overlap the decay tiles' exps.
                auto kh_work = [&]() { return kh_jobs.run_one(); };
                gdn::prep::prepare_chunk(records, nt, key_tiles, false, fill, kh_work);
            } else {
                DeviceZoneScopedN("seq.kh_KT");
                while (kt_jobs.run_one()) {
                }
                while (kh_jobs.run_one()) {
                }
                while (qt_jobs.run_one()) {
                }
            }
#else
            const RecordView& rec = record_view;
            {
                DeviceZoneScopedN("seq.kh_KT");
                while (kt_jobs.run_one()) {
                }
                while (kh_jobs.run_one()) {
                }
                while (qt_jobs.run_one()) {
                }
            }
#endif
            cb_push_back(cb_kh, chunk_tiles);
            cb_push_back(cb_kt, key_tiles * nt);
            cb_push_back(cb_qt, key_tiles * nt);
            cb_wait_front(cb_v, chunk_tiles);
            rec.wait_record(ntri);
            cb_wait_front(cb_kh, chunk_tiles);
            cb_wait_front(cb_kt, key_tiles * nt);
            cb_wait_front(cb_qt, key_tiles * nt);
            {
                DeviceZoneScopedN("seq.vnew");
                // Vnew(I, :) = sum_{J <= I} T~(I, J) v(J, :) + (-T^)(I, J) kh(J, :), up to kDstTiles columns.
                cb_reserve_back(cb_vnew, chunk_tiles);
                for (uint32_t i = 0; i < nt; ++i) {
                    for (uint32_t j0 = 0; j0 < block_tiles; j0 += gdn::kDstTiles) {
                        const uint32_t n = min_u32(gdn::kDstTiles, block_tiles - j0);
                        tile_regs_acquire();
                        gdn::matmul_start(rec.cb_t_beta, cb_v);
                        for (uint32_t j = 0; j <= i; ++j) {
                            gdn::matmul_row(rec.cb_t_beta, cb_v, rec.t_beta(gdn::tri(i, j)), j * block_tiles + j0, 0, n);
                        }
                        gdn::matmul_start(rec.cb_neg_t_beta_exp, cb_kh);
                        for (uint32_t j = 0; j <= i; ++j) {
                            gdn::matmul_row(rec.cb_neg_t_beta_exp, cb_kh, rec.neg_t_beta_exp(gdn::tri(i, j)),
                                            j * block_tiles + j0, 0, n);
                        }
                        pack_block_at(cb_vnew, 1, n, i, j0, block_tiles);
                    }
                }
                cb_push_back(cb_vnew, chunk_tiles);
            }
            {
                DeviceZoneScopedN("seq.O");
                // O(I, :) = q~_I h + sum_{J <= I} P(I, J) Vnew(J, :), in 2 x 2 blocks packed to their places.
                cb_reserve_back(cb_o, chunk_tiles);
                for (uint32_t i0 = 0; i0 < nt; i0 += 2) {
                    const uint32_t rn = min_u32(2, nt - i0);
                    for (uint32_t j0 = 0; j0 < block_tiles; j0 += 2) {
                        const uint32_t cn = min_u32(2, block_tiles - j0);
                        tile_regs_acquire();
                        gdn::matmul_start(cb_qt, cb_h);
                        for (uint32_t kt = 0; kt < key_tiles; ++kt) {
                            matmul_block(cb_qt, cb_h, i0 * key_tiles + kt, kt * block_tiles + j0, 0, 0, cn, rn, key_tiles);
                        }
                        if (i0 == 0 && j0 == 0) cb_wait_front(cb_vnew, chunk_tiles);
                        gdn::matmul_start(rec.cb_p, cb_vnew);
                        for (uint32_t r = 0; r < rn; ++r) {
                            for (uint32_t j = 0; j <= i0 + r; ++j) {
                                gdn::matmul_row(rec.cb_p, cb_vnew, rec.p(gdn::tri(i0 + r, j)), j * block_tiles + j0, r * cn, cn);
                            }
                        }
                        pack_block_at(cb_o, rn, cn, i0, j0, block_tiles);
                    }
                }
                cb_push_back(cb_o, chunk_tiles);
            }
            {
                DeviceZoneScopedN("seq.h");
                // h <- exp(last) h + K~^T Vnew, in 2 x 2 blocks, into the other half of cb_h.
                const uint32_t decay_bits = read_tile_value(cb_vec, gdn::gv::at(gdn::gv::kLast, 0, nt), 0);
                cb_reserve_back(cb_h, state_tiles);
                for (uint32_t k0 = 0; k0 < key_tiles; k0 += 2) {
                    const uint32_t rn = min_u32(2, key_tiles - k0);
                    for (uint32_t j0 = 0; j0 < block_tiles; j0 += 2) {
                        const uint32_t cn = min_u32(2, block_tiles - j0);
                        tile_regs_acquire();
                        reconfig_data_format_srca(cb_h);
                        copy_init(cb_h);
                        for (uint32_t r = 0; r < rn; ++r) {
                            for (uint32_t x = 0; x < cn; ++x) copy_tile(cb_h, (k0 + r) * block_tiles + j0 + x, r * cn + x);
                        }
                        binop_with_scalar_tile_init();
                        for (uint32_t x = 0; x < rn * cn; ++x) mul_unary_tile(x, decay_bits);
                        gdn::matmul_start(cb_kt, cb_vnew);
                        for (uint32_t i = 0; i < nt; ++i) {
                            matmul_block(cb_kt, cb_vnew, k0 * nt + i, i * block_tiles + j0, 0, 0, cn, rn, nt);
                        }
                        pack_block_at(cb_h, rn, cn, k0, j0, block_tiles);
                    }
                }
                cb_push_back(cb_h, state_tiles);
            }
            cb_pop_front(cb_h, state_tiles);  // the old state; the new one is now at the front
            cb_pop_front(cb_kh, chunk_tiles);
            cb_pop_front(cb_vnew, chunk_tiles);
            cb_pop_front(cb_kt, key_tiles * nt);
            cb_pop_front(cb_qt, key_tiles * nt);
            cb_pop_front(cb_k, nt * key_tiles);
            cb_pop_front(cb_q, nt * key_tiles);
            cb_pop_front(cb_v, chunk_tiles);
            cb_pop_front(cb_vec, vec_tiles);
            rec.pop_record(ntri);

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
