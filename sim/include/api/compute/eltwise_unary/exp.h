// exp on the SFPU, in place on a DST tile (api/compute/eltwise_unary/exp.h): exp(x), or exp(scale * x)
// with scale_en (scale as bf16 bits), in fp32 with the C library, on both paths. tt-llk's accurate path
// is within bf16 resolution of it. Its approximate path (approx = true) builds the bits of exp(x) as
// an integer (i = 256/ln2 * s * max(x, -88.5/s) + 32500.818, to 16 bits, shifted left 15), a few percent
// off; the simulator does not apply that formula, because this repository's own kernels (flash
// attention) run the approximate path and their tested values are those of the exact exp: a documented
// simulator difference. Cost: the approximate or the accurate exp figure by the template's `approx`.
//
// The scale, as tt-llk applies it (ckernel_sfpu_exp.h, wormhole_b0): the approximate path bakes the
// init's `scale` template argument (fp32 bits) into its constants and ignores exp_tile's scale_en and
// scale; the accurate path ignores the init's scale and multiplies by exp_tile's bf16 `scale` when
// scale_en. tt-metal's sdpa relies on the first (exp_tile_init<true, scale>, then exp_tile<true, false>).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

namespace ckernel {
enum class InputClamping : uint8_t { ClampToNegative = 1, None = 0 };
}  // namespace ckernel

namespace ttsim::exp {
// p[0]: exp_tile's scale (1.0 unless scale_en), p[1]: exp_tile's approx; p[4], p[5]: the init's scale and
// whether an exp_tile_init gave one (an init through SFPU_UNARY_INIT_FN does not).
inline float value(float x, const uint32_t* p) {
    const bool init_scale = p[1] != 0 && p[kSfpuMaxParams + 1] != 0;
    return std::exp(x * sfpu::as_float(init_scale ? p[kSfpuMaxParams] : p[0]));
}
constexpr uint64_t cost(bool approx) { return approx ? sfpu_cost::kExpApprox : sfpu_cost::kExp; }
}  // namespace ttsim::exp

namespace ckernel {

// As in the pinned ttnn headers: `scale` (fp32 bits) is the factor the approximate path bakes in at init.
template <bool approx = false, uint32_t scale = 0x3F800000,
          InputClamping input_clamping = InputClamping::ClampToNegative, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_tile_init() {
    ttsim::sfpu::setup("exponential", scale, 1);
}
template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC, uint16_t scale = p_sfpu::kCONST_1_FP16B) {
    ttsim::sfpu::unary<ttsim::exp::value>("exp_tile", "exponential", ttsim::exp::cost(approx), idst, vector_mode,
                                          scale_en ? uint32_t(scale) << 16 : 0x3F800000u, approx ? 1u : 0u);
}

// The pack thread's exp (between tile_regs_wait and pack_tile): the SFPU work overlaps the math
// thread's next operations instead of following them (the simulator's pack-thread SFPU entry).
template <bool approx = false, uint32_t scale = 0x3F800000,
          InputClamping input_clamping = InputClamping::ClampToNegative, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_packthread_tile_init() {
    TTSIM->sfpu_init_on_pack(ttsim::SfpuOp::Exp, scale);
}
template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_packthread_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC,
                              uint16_t scale = p_sfpu::kCONST_1_FP16B) {
    TTSIM->sfpu_unary_on_pack(ttsim::SfpuOp::Exp, idst, scale_en ? uint32_t(scale) << 16 : 0x3F800000u, approx ? 1u : 0u,
                              sfpu_faces(vector_mode));
}

}  // namespace ckernel
