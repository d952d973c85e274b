// GDN gates: beta = sigmoid(b) and g = -exp(A_log) * softplus(a + dt_bias), element-wise in fp32 on
// the SFPU (a, b exact from bf16; the parameters arrive as fp32 row-broadcast tiles).
//
// Compile-time args: none.
// Common runtime args: 0 softplus threshold (fp32 bits; above it softplus(x) = x).
// Runtime args: 0 number of tiles.
// CBs: c_0 a, c_1 b, c_2 dt_bias rows, c_3 A_log rows; outputs c_16 g, c_17 beta (fp32).
#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_unary/softplus.h"
#include "gdn_compute.h"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr uint32_t cb_dt_bias = tt::CBIndex::c_2;
    constexpr uint32_t cb_a_log = tt::CBIndex::c_3;
    constexpr uint32_t cb_g = tt::CBIndex::c_16;
    constexpr uint32_t cb_beta = tt::CBIndex::c_17;
    constexpr uint32_t kOneBits = 0x3F800000;  // softplus beta = 1 and 1 / beta
    const uint32_t threshold_bits = get_common_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(0);

    compute_kernel_hw_startup(cb_a, cb_dt_bias, cb_g);
    for (uint32_t t = 0; t < count; ++t) {
        cb_wait_front(cb_a, 1);
        cb_wait_front(cb_b, 1);
        cb_wait_front(cb_dt_bias, 1);
        cb_wait_front(cb_a_log, 1);

        tile_regs_acquire();
        gdn::copy_in(cb_a, 0, 0);
        gdn::copy_in(cb_dt_bias, 0, 1);
        gdn::add_dst(0, 1, 0);
        softplus_tile_init();
        softplus_tile(0, kOneBits, kOneBits, threshold_bits);
        gdn::copy_in(cb_a_log, 0, 1);
        gdn::exp_dst(1);
        gdn::negate_dst(1);
        gdn::mul_dst(0, 1, 0);
        gdn::pack_dst_push(cb_g);

        tile_regs_acquire();
        gdn::copy_in(cb_b, 0, 0);
        sigmoid_tile_init();
        sigmoid_tile(0);
        gdn::pack_dst_push(cb_beta);

        cb_pop_front(cb_a, 1);
        cb_pop_front(cb_b, 1);
        cb_pop_front(cb_dt_bias, 1);
        cb_pop_front(cb_a_log, 1);
    }
}
