// tt-metal's sdpa SFPU helpers (experimental/llk_sfpu/ckernel_sfpu_sdpa.h), for the simulator: the same
// functions over the same DST positions, written on the SFPI emulation (sfpi.h). Where the device
// header builds exp / reciprocal / softplus from SFPU instructions, these compute them lane by lane in
// fp32 with the C library (the simulator's SFPU convention, see api/compute/eltwise_unary/exp.h) and
// charge the simulator's tile figure for that function per 32-lane application.
//
// The "first column" helpers walk 4 steps of 2 dst_reg units per face: the even columns of the face's
// 16 rows, so column 0 (where sdpa keeps its row statistics) and the other even columns change, the
// odd columns do not, as on the device. The drivers (SFPU_UNARY_CALL, _llk_math_eltwise_*_sfpu_params_)
// are in llk_math_eltwise_sfpu_params.h.
#pragma once

#include <cmath>
#include <cstdint>

#include "llk_math_eltwise_sfpu_params.h"
#include "sfpi.h"
#include "ttsim/sfpu.h"
#include "ttsim/sfpu_cost.h"

namespace ckernel::sfpu {

namespace detail_sdpa {
// f applied to every lane as one library evaluation of `tile_cycles` per tile.
template <typename F>
inline sfpi::vFloat lanewise(const sfpi::vFloat& x, uint64_t tile_cycles, F f) {
    sfpi::vFloat r;
    for (int i = 0; i < sfpi::kLanes; ++i) r.v[i] = f(x.v[i]);
    ttsim::sfpi_emu::count(tile_cycles / ttsim::sfpu_cost::kPass);
    return r;
}
inline float bf16_value(uint32_t bits16) { return ttsim::sfpu::as_float(bits16 << 16); }
inline sfpi::vFloat exp_scaled(const sfpi::vFloat& x, float scale) {
    return lanewise(x, ttsim::sfpu_cost::kExp, [scale](float v) { return std::exp(v * scale); });
}
inline sfpi::vFloat recip(const sfpi::vFloat& x) {
    return lanewise(x, ttsim::sfpu_cost::kRecip, [](float v) { return 1.0f / v; });
}
constexpr int kHalfFaceSteps = 4;  // 4 steps of 2 units: the even columns of a face's 16 rows
}  // namespace detail_sdpa

// The reciprocal's set-up programs SFPU constants for its Newton iterations; the emulation's
// reciprocal is the library's, so there is nothing to keep.
template <bool approx = false>
inline void sfpu_reciprocal_init() {}

template <bool is_fp32_dest_acc_en>
inline void calculate_recip_first_column() {
    for (int d = 0; d < detail_sdpa::kHalfFaceSteps; d++) {
        sfpi::dst_reg[0] = detail_sdpa::recip(sfpi::dst_reg[0]);
        sfpi::dst_reg += 2;
    }
}

// exp(x * scale), scale as bf16 bits; the approximate and polynomial device paths both modeled as the
// library exp (the simulator's documented exp difference).
template <bool SDPA_EXP_APPROX_MODE, uint16_t scale_bf16, bool is_fp32_dest_acc_en>
inline void calculate_exponential_first_column() {
    const float scale = detail_sdpa::bf16_value(scale_bf16);
    for (int d = 0; d < detail_sdpa::kHalfFaceSteps; d++) {
        sfpi::dst_reg[0] = detail_sdpa::exp_scaled(sfpi::dst_reg[0], scale);
        sfpi::dst_reg += 2;
    }
}

// The online-softmax correction on five (or four) DST tiles from the driver's base: 0 prev_max,
// 1 worker_max, 2 cur_max (out), 3 prev_sum (in, out: the corrected sum), 4 worker_sum (or tile 2,
// read before cur_max overwrites it, when reuse_cur_max_tile). Outputs: tile 0 exp(s*(prev-cur)),
// tile 1 exp(s*(worker-cur)), tile 2 max(prev, worker), tile 3 the two sums each corrected by its exp
// and added. DST stores in between round as DST does (sfpi.h), so a 16-bit DST sees bf16 steps.
template <bool is_fp32_dest_acc_en, bool reuse_cur_max_tile = false>
inline void calculate_fused_max_sub_exp_add_tile(int scale_bf16) {
    static_assert(!reuse_cur_max_tile || is_fp32_dest_acc_en, "the four-tile layout needs fp32 DST");
    constexpr int tile = 32;  // dst_reg units per DST tile
    constexpr int prev_max = 0, worker_max = tile, cur_max = 2 * tile, prev_sum = 3 * tile;
    constexpr int worker_sum = reuse_cur_max_tile ? cur_max : 4 * tile;
    const float scale = detail_sdpa::bf16_value(uint32_t(scale_bf16) & 0xFFFFu);
    for (int d = 0; d < detail_sdpa::kHalfFaceSteps; d++) {
        const sfpi::vFloat pm = sfpi::dst_reg[prev_max];
        const sfpi::vFloat wm = sfpi::dst_reg[worker_max];
        const sfpi::vFloat ps = sfpi::dst_reg[prev_sum];
        const sfpi::vFloat ws = sfpi::dst_reg[worker_sum];
        v_if(pm < wm) { sfpi::dst_reg[cur_max] = wm; }
        v_else { sfpi::dst_reg[cur_max] = pm; }
        v_endif;
        const sfpi::vFloat cm = sfpi::dst_reg[cur_max];
        const sfpi::vFloat e_prev = detail_sdpa::exp_scaled(pm - cm, scale);
        const sfpi::vFloat e_worker = detail_sdpa::exp_scaled(wm - cm, scale);
        sfpi::dst_reg[prev_max] = e_prev;
        sfpi::dst_reg[worker_max] = e_worker;
        sfpi::vFloat ws_corrected = e_worker * ws;
        if constexpr (!reuse_cur_max_tile) {
            sfpi::dst_reg[worker_sum] = ws_corrected;  // through DST, as the five-tile layout rounds it
            ws_corrected = sfpi::dst_reg[worker_sum];
        }
        sfpi::dst_reg[prev_sum] = e_prev * ps;
        const sfpi::vFloat ps_corrected = sfpi::dst_reg[prev_sum];
        sfpi::dst_reg[prev_sum] = ws_corrected + ps_corrected;
        sfpi::dst_reg += 2;
    }
}

// softplus(x) = x when beta * x > threshold, else log(1 + exp(beta * x)) / beta; params as fp32 bits.
template <bool is_fp32_dest_acc_en>
inline void calculate_softplus_first_column(uint32_t beta_bits, uint32_t beta_reciprocal_bits, uint32_t threshold_bits) {
    const float beta = ttsim::sfpu::as_float(beta_bits);
    const float beta_recip = ttsim::sfpu::as_float(beta_reciprocal_bits);
    const float threshold = ttsim::sfpu::as_float(threshold_bits);
    for (int d = 0; d < detail_sdpa::kHalfFaceSteps; d++) {
        sfpi::dst_reg[0] = detail_sdpa::lanewise(sfpi::dst_reg[0], ttsim::sfpu_cost::kExp + ttsim::sfpu_cost::kLog,
                                                 [=](float x) {
                                                     const float bx = beta * x;
                                                     return bx > threshold ? x : beta_recip * std::log1p(std::exp(bx));
                                                 });
        sfpi::dst_reg += 2;
    }
}

}  // namespace ckernel::sfpu
