// GDN chunk preparation, compute: everything of one chunk of one value head that does not depend
// on the recurrent state, for the sequential pass to read back from DRAM: per unit (value head,
// chunk) the record P, then T~ and -T^ interleaved tile by tile (tri order), all described with the
// method and its accuracy in scan_prep_chunk.h.
//
// Compile-time args: none.
// Common runtime args: 0 tiles per chunk (nt), 1 key tiles (KT).
// Runtime args: 0 number of units.
// CBs: inputs c_0 k, c_1 q (bf16), c_3 gate vectors, c_5 constants (scan_prep_consts.h); scratch as
//      scan_prep_chunk.h lists; output c_16 records (to the writer).
#include "api/compute/compute_kernel_hw_startup.h"
#include "scan_prep_chunk.h"

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t nt = get_common_arg_val<uint32_t>(0);
    const uint32_t key_tiles = get_common_arg_val<uint32_t>(1);
    const uint32_t num_units = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(gdn::prep::cb_k, gdn::prep::cb_k, cb_out);
    cb_wait_front(gdn::prep::cb_consts, gdn::kNumConsts);
    // The whole record goes out through one CB, in the order the writer and the sequential pass expect.
    const gdn::prep::PrepOutputs out{cb_out, cb_out, cb_out};
#ifdef GDN_HELPER_SHARED_QK
    // A helper core of the fused scan whose value heads (common arg 2 of them) share one q/k head: per
    // chunk, k and q come once and k k^T, q k^T are formed once (c_12, c_13), then each head's gate
    // vectors and record follow (units = chunks x heads).
    const uint32_t heads = get_common_arg_val<uint32_t>(2);
    const gdn::prep::KeyProducts kp{tt::CBIndex::c_12, tt::CBIndex::c_13, true};
    const uint32_t ntri = nt * (nt + 1) / 2;
    const uint32_t vec_tiles = gdn::gv::kinds(nt) * nt;
    for (uint32_t unit = 0; unit < num_units; unit += heads) {
        cb_wait_front(gdn::prep::cb_k, nt * key_tiles);
        cb_wait_front(gdn::prep::cb_q, nt * key_tiles);
        // The group's k k^T and q k^T are formed while the first head's decay exps run.
        gdn::prep::KeyProductJobs key_products{kp, nt, key_tiles};
        auto key_product_work = [&key_products]() { return key_products.run_one(); };
        for (uint32_t h = 0; h < heads; ++h) {
            gdn::prep::PJobs p_jobs{nt, key_tiles, cb_out, kp};
            auto fill = [&p_jobs]() { return p_jobs.run_one(); };
            gdn::prep::prepare_chunk(out, nt, key_tiles, false, fill, key_product_work, kp);
            cb_pop_front(gdn::prep::cb_vec, vec_tiles);
        }
        cb_pop_front(gdn::prep::cb_k, nt * key_tiles);
        cb_pop_front(gdn::prep::cb_q, nt * key_tiles);
        cb_pop_front(kp.cb_kk, ntri);
        cb_pop_front(kp.cb_qk, ntri);
    }
#else
    for (uint32_t unit = 0; unit < num_units; ++unit) {
        gdn::prep::PJobs p_jobs{nt, key_tiles, cb_out};
        auto fill = [&p_jobs]() { return p_jobs.run_one(); };
        gdn::prep::prepare_chunk(out, nt, key_tiles, true, fill, gdn::prep::no_jobs);
    }
#endif
}
