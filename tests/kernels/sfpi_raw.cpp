// Test compute kernel: raw SFPI code (sim/include/sfpi.h) through the LLK drivers, on input A in DST 0
// and input B in DST 1; packs DST 0. SFPI_TEST picks the code:
//   1 binary driver, VectorMode::RC: DST0 = max(DST0, DST1) by v_if (sdpa_max_sfpi's pattern)
//   2 unary driver, VectorMode::C, 4 steps of 2: doubles the even columns of faces 0 and 2 only
//   3 v_if / v_elseif / v_else: x < 0 -> -x, x > 1 -> 1, else x / 2
// Runtime args: 0 number of tiles. CBs: c_0 input A, c_1 input B, c_16 output.
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "llk_math_eltwise_sfpu_params.h"
#include "sfpi.h"

inline void max_of(uint32_t in0, uint32_t in1, uint32_t out) {
    for (int d = 0; d < 8; d++) {
        sfpi::vFloat a = sfpi::dst_reg[in0 * 32];
        const sfpi::vFloat b = sfpi::dst_reg[in1 * 32];
        v_if(b > a) { a = b; }
        v_endif;
        sfpi::dst_reg[out * 32] = a;
        sfpi::dst_reg++;
    }
}
inline void double_even_columns() {
    for (int d = 0; d < 4; d++) {
        sfpi::vFloat x = sfpi::dst_reg[0];
        sfpi::dst_reg[0] = x * sfpi::vFloat(2.0f);
        sfpi::dst_reg += 2;
    }
}
inline void piecewise() {
    for (int d = 0; d < 8; d++) {
        sfpi::vFloat x = sfpi::dst_reg[0];
        v_if(x < sfpi::vFloat(0.0f)) { x = -x; }
        v_elseif(x > sfpi::vFloat(1.0f)) { x = 1.0f; }
        v_else { x = x * sfpi::vFloat(0.5f); }
        v_endif;
        sfpi::dst_reg[0] = x;
        sfpi::dst_reg++;
    }
}

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t count = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(cb_a, cb_b, cb_out);
    for (uint32_t t = 0; t < count; ++t) {
        cb_wait_front(cb_a, 1);
        cb_wait_front(cb_b, 1);
        cb_reserve_back(cb_out, 1);
        tile_regs_acquire();
        copy_init(cb_a);
        copy_tile(cb_a, 0, 0);
        copy_init(cb_b);
        copy_tile(cb_b, 0, 1);
#if SFPI_TEST == 1
        _llk_math_eltwise_binary_sfpu_params_(max_of, 0, 1, 0, VectorMode::RC);
#elif SFPI_TEST == 2
        _llk_math_eltwise_unary_sfpu_params_<DST_ACCUM_MODE>(double_even_columns, 0, VectorMode::C);
#elif SFPI_TEST == 3
        _llk_math_eltwise_unary_sfpu_params_<DST_ACCUM_MODE>(piecewise, 0, VectorMode::RC);
#endif
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, cb_out);
        tile_regs_release();
        cb_push_back(cb_out, 1);
        cb_pop_front(cb_a, 1);
        cb_pop_front(cb_b, 1);
    }
}
