// tt-llk's SFPU drivers for raw SFPI code, and tt-metal's macros over them (llk_math_eltwise_unary_sfpu_
// macros.h), for the simulator: the driver runs the functor once per face of the vector mode on the
// SFPI emulation (sfpi.h), which fetches and writes back the DST tiles and charges the instructions.
// Only the macros and functors sdpa uses are here; any other is a compile error naming it.
#pragma once

#include <cstdint>

#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "sfpi.h"
#include "ttsim/sfpu.h"

#define TTSIM_EXPAND(...) __VA_ARGS__

// Binary SFPU functors address DST tiles by absolute index (dst_reg[tile * 32]): the driver's base
// is tile 0, as tt-llk's binary start.
template <typename Fn, typename... Args>
inline void _llk_math_eltwise_binary_sfpu_params_(Fn&& fn, uint32_t dst_in0, uint32_t dst_in1, uint32_t dst_out,
                                                 VectorMode vector_mode = VectorMode::RC, Args&&... args) {
    ttsim::sfpi_emu::run_faces("_llk_math_eltwise_binary_sfpu_params_", 0, vector_mode,
                               [&] { fn(dst_in0, dst_in1, dst_out, args...); });
}

// Unary SFPU functors address DST from the tile dst_index.
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE, typename Fn, typename... Args>
inline void _llk_math_eltwise_unary_sfpu_params_(Fn&& fn, uint32_t dst_index, VectorMode vector_mode = VectorMode::RC,
                                                Args&&... args) {
    ttsim::sfpi_emu::run_faces("_llk_math_eltwise_unary_sfpu_params_", int(dst_index), vector_mode,
                               [&] { fn(args...); });
}

// SFPU_UNARY_CALL(sync, fp32, FN, (template args), dst, vector mode, call args...): FN of ckernel::sfpu.
#define SFPU_UNARY_CALL(DST_SYNC, DST_ACCUM, FN, TEMPLATES, DST_IDX, VECTOR_MODE, ...)                      \
    ::ttsim::sfpi_emu::run_faces(#FN, int(DST_IDX), (VECTOR_MODE), [&] {                                    \
        ::ckernel::sfpu::FN<TTSIM_EXPAND TEMPLATES>(__VA_ARGS__);                                             \
    })
// SFPU_UNARY_INIT_FN(op, init function, (template args)): the SFPU set up for `op`, then its init.
#define SFPU_UNARY_INIT_FN(OP, INIT_FN, TEMPLATES) \
    (::ttsim::sfpu::setup(#OP), ::ckernel::INIT_FN<TTSIM_EXPAND TEMPLATES>())

// The SFPU ops whose generic init kernels name (tt-llk's SfpuType); only those sdpa uses.
enum class SfpuType { exponential, reciprocal };
inline const char* ttsim_sfpu_type_name(SfpuType t) { return t == SfpuType::exponential ? "exponential" : "reciprocal"; }

// The generic unary SFPU init (address modifiers, no op constants): the SFPU set up for that op.
template <SfpuType op, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
inline void llk_math_eltwise_unary_sfpu_init() {
    ttsim::sfpu::setup(ttsim_sfpu_type_name(op));
}

// Raw SFPU code outside a driver (compute_streaming.hpp's recip_tile_first_column_wh_idst0_direct):
// math::set_addr_mod_base opens a session on DST from tile 0, TTI_SETRWC(.., CR_D, n, .., SET_D) moves
// the face origin n rows on (the counter back to it, as Cr + n), math::clear_addr_mod_base writes back
// and charges. The simulator's engines finish each call before the next, so TTI_STALLWAIT has nothing
// to wait for.
namespace p_setrwc {
constexpr std::uint32_t CLR_NONE = 0x0;
constexpr std::uint32_t SET_D = 0x4;
constexpr std::uint32_t CR_D = 0x4;
}  // namespace p_setrwc
#define TTI_STALLWAIT(stall_res, wait_res) ((void)(stall_res), (void)(wait_res))
#define TTI_SETRWC(clear_ab, rwc_cr, rwc_d, rwc_b, rwc_a, bit_mask) \
    ::ttsim::sfpi_emu::set_rwc_d((clear_ab), (rwc_cr), (rwc_d), (rwc_b), (rwc_a), (bit_mask))
namespace math {
inline void set_addr_mod_base() { ::ttsim::sfpi_emu::begin_direct("recip_tile_first_column_wh_idst0_direct"); }
inline void clear_addr_mod_base() { ::ttsim::sfpi_emu::end_direct(); }
}  // namespace math

namespace ckernel::sfpu {

// x op scalar (fp32 bits) over the face's ITERATIONS dst_reg steps.
template <bool APPROXIMATION_MODE, int BINOP_MODE, int ITERATIONS = 8, bool is_fp32_dest_acc_en = false>
inline void calculate_binop_with_scalar(uint32_t scalar_bits) {
    const sfpi::vFloat s(ttsim::sfpu::as_float(scalar_bits));
    for (int d = 0; d < ITERATIONS; d++) {
        const sfpi::vFloat x = sfpi::dst_reg[0];
        sfpi::vFloat r;
        if constexpr (BINOP_MODE == ADD_UNARY) r = x + s;
        else if constexpr (BINOP_MODE == SUB_UNARY) r = x - s;
        else if constexpr (BINOP_MODE == MUL_UNARY) r = x * s;
        else if constexpr (BINOP_MODE == RSUB_UNARY) r = s - x;
        else static_assert(BINOP_MODE == ADD_UNARY, "calculate_binop_with_scalar: only add, sub, mul, rsub are modeled");
        sfpi::dst_reg[0] = r;
        sfpi::dst_reg++;
    }
}

}  // namespace ckernel::sfpu
