// GDN gate vectors, compute: the quantities of gate_vectors.h for one chunk and 32 value heads, from
// the chunk's g and beta tiles (tokens along rows, heads along columns), in fp32 on the SFPU:
//  1. g and beta with the rows past the sequence's end zeroed (only the last token tile has any);
//  2. gam = cumsum of g down each head's column (cumsum_tile, carried from tile to tile); a zero tile
//     after token tile I comes out as end(I) in every row, without disturbing the carry;
//  3. gam, end(I) and beta transposed (exact), so heads run along rows and tokens along columns, the
//     layout of the gate-vector tensor;
//  4. per token tile, every quantity in the order of gate_vectors.h. Each exp is taken of an fp32
//     difference of two exact fp32 operands.
//
// Compile-time args: none.
// Common runtime args: 0 tiles per chunk (nt), 1 tokens T, 2 head tiles (HT).
// Runtime args: 0 first unit, 1 number of units (unit u: chunk u / HT).
// CBs: c_0 g, c_1 beta (nt each), c_2 constants (zero tile, valid-row mask; bf16);
//      scratch c_24 masked g, c_25 masked beta, c_26 gam, c_27 end(I) rows, c_28 gam^T, c_29 end(I)^T,
//      c_30 beta^T (nt each, fp32); output c_16 the quantities (fp32).
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/cumsum.h"
#include "gate_vectors.h"
#include "gdn_compute.h"

namespace {
constexpr uint32_t cb_g = tt::CBIndex::c_0;
constexpr uint32_t cb_beta = tt::CBIndex::c_1;
constexpr uint32_t cb_consts = tt::CBIndex::c_2;
constexpr uint32_t cb_out = tt::CBIndex::c_16;
constexpr uint32_t cb_g_masked = tt::CBIndex::c_24;
constexpr uint32_t cb_beta_masked = tt::CBIndex::c_25;
constexpr uint32_t cb_gam = tt::CBIndex::c_26;
constexpr uint32_t cb_end = tt::CBIndex::c_27;
constexpr uint32_t cb_gam_t = tt::CBIndex::c_28;
constexpr uint32_t cb_end_t = tt::CBIndex::c_29;
constexpr uint32_t cb_beta_t = tt::CBIndex::c_30;
constexpr uint32_t kConstZero = 0;
constexpr uint32_t kConstValidRows = 1;

// cb_out <- tile i of cb, rows past the sequence zeroed when `ragged`.
void masked_copy(uint32_t cb, uint32_t i, bool ragged, uint32_t cb_dst) {
    tile_regs_acquire();
    gdn::copy_in(cb, i, 0);
    if (ragged) gdn::mask_dst(0, cb_consts, kConstValidRows);
    gdn::pack_dst_push(cb_dst);
}

// DST[0] = exp(a - b) for tiles of two CBs.
void exp_of_difference(uint32_t cb_a, uint32_t ia, uint32_t cb_b, uint32_t ib) {
    gdn::copy_in(cb_a, ia, 0);
    gdn::copy_in(cb_b, ib, 1);
    gdn::sub_dst(0, 1, 0);
    gdn::exp_dst(0);
}
}  // namespace

void kernel_main() {
    const uint32_t nt = get_common_arg_val<uint32_t>(0);
    const uint32_t tokens = get_common_arg_val<uint32_t>(1);
    const uint32_t head_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t first = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);
    const uint32_t token_tiles = (tokens + 31) / 32;
    const bool ragged_end = tokens % 32 != 0;
    const uint32_t last = nt - 1;

    compute_kernel_hw_startup(cb_g, cb_g, cb_out);
    cb_wait_front(cb_consts, 2);
    for (uint32_t u = first; u < first + count; ++u) {
        const uint32_t first_tt = (u / head_tiles) * nt;
        cb_wait_front(cb_g, nt);
        cb_wait_front(cb_beta, nt);
        for (uint32_t i = 0; i < nt; ++i) {
            const bool ragged = ragged_end && first_tt + i == token_tiles - 1;
            masked_copy(cb_g, i, ragged, cb_g_masked);
            masked_copy(cb_beta, i, ragged, cb_beta_masked);
        }
        cb_pop_front(cb_g, nt);
        cb_pop_front(cb_beta, nt);

        // No other SFPU op may run between these cumsums: they carry the running totals.
        cb_wait_front(cb_g_masked, nt);
        cumsum_tile_init();
        for (uint32_t i = 0; i < nt; ++i) {
            tile_regs_acquire();
            gdn::copy_in(cb_g_masked, i, 0);
            cumsum_tile(0, i == 0);
            gdn::pack_dst_push(cb_gam);
            tile_regs_acquire();
            gdn::copy_in(cb_consts, kConstZero, 0);
            cumsum_tile(0, false);
            gdn::pack_dst_push(cb_end);
        }
        cb_pop_front(cb_g_masked, nt);

        cb_wait_front(cb_gam, nt);
        cb_wait_front(cb_end, nt);
        cb_wait_front(cb_beta_masked, nt);
        for (uint32_t i = 0; i < nt; ++i) {
            const uint32_t from[3] = {cb_gam, cb_end, cb_beta_masked};
            const uint32_t to[3] = {cb_gam_t, cb_end_t, cb_beta_t};
            for (uint32_t x = 0; x < 3; ++x) {
                tile_regs_acquire();
                gdn::transpose_in(from[x], i, 0);
                gdn::pack_dst_push(to[x]);
            }
        }
        cb_pop_front(cb_gam, nt);
        cb_pop_front(cb_end, nt);
        cb_pop_front(cb_beta_masked, nt);

        cb_wait_front(cb_gam_t, nt);
        cb_wait_front(cb_end_t, nt);
        cb_wait_front(cb_beta_t, nt);
        for (uint32_t i = 0; i < nt; ++i) {
            tile_regs_acquire();  // kBeta
            gdn::copy_in(cb_beta_t, i, 0);
            gdn::pack_dst_push(cb_out);
            tile_regs_acquire();  // kGam
            gdn::copy_in(cb_gam_t, i, 0);
            gdn::pack_dst_push(cb_out);
            tile_regs_acquire();  // kExpGam, kBetaExpGam
            gdn::copy_in(cb_gam_t, i, 0);
            gdn::exp_dst(0);
            gdn::copy_in(cb_beta_t, i, 1);
            gdn::mul_dst(0, 1, 1);
            gdn::pack_dst_push(cb_out, 2);
            tile_regs_acquire();  // kToLast
            exp_of_difference(cb_end_t, last, cb_gam_t, i);
            gdn::pack_dst_push(cb_out);
            tile_regs_acquire();  // kLast
            gdn::copy_in(cb_end_t, last, 0);
            gdn::exp_dst(0);
            gdn::pack_dst_push(cb_out);
            tile_regs_acquire();  // kToTileEnd
            exp_of_difference(cb_end_t, i, cb_gam_t, i);
            gdn::pack_dst_push(cb_out);
            for (uint32_t j = 0; j + 1 < nt; ++j) {  // kFromTileEnd + j
                tile_regs_acquire();
                if (i > j) {
                    exp_of_difference(cb_gam_t, i, cb_end_t, j);
                } else {
                    gdn::copy_in(cb_consts, kConstZero, 0);
                }
                gdn::pack_dst_push(cb_out);
            }
        }
        cb_pop_front(cb_gam_t, nt);
        cb_pop_front(cb_end_t, nt);
        cb_pop_front(cb_beta_t, nt);
    }
}
