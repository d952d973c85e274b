// Test compute kernel: applies one API operation, chosen by a define, to each tile.
//
// Defines: exactly one of OP_COPY, OP_BINARY (with BINARY_INIT / BINARY_CALL), OP_MATMUL,
//          OP_REDUCE (with REDUCE_POOL, REDUCE_DIM), OP_TRANSPOSE, OP_SFPU (with SFPU_INIT, SFPU_CALL),
//          OP_SFPU_BINARY (with SFPU_INIT, SFPU_CALL taking two DST indices),
//          OP_PACK_L1_ACC (packs A, then B with packer L1 accumulation onto the same output page: A + B),
//          OP_EXP_PACKTHREAD (copies A, then exp on the pack thread after tile_regs_wait).
// Runtime args: 0 number of tiles, 1 tiles of c_1 held resident (0: one c_1 tile per c_0 tile).
// CBs: c_0 input A, c_1 input B (binary, matmul, reduce scaler), c_16 output.
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/bcast.h"
#include "api/compute/matmul.h"
#include "api/compute/reduce.h"
#include "api/compute/transpose.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/recip.h"
#include "api/compute/eltwise_unary/sqrt.h"
#include "api/compute/eltwise_unary/rsqrt.h"
#include "api/compute/eltwise_unary/softplus.h"
#include "api/compute/eltwise_unary/negative.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/binary_max_min.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/sfpu_binary_bcast.h"
#include "api/compute/copy_dest_values.h"
#include "api/debug/kernel_profiler.hpp"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t count = get_arg_val<uint32_t>(0);
    const uint32_t resident_b = get_arg_val<uint32_t>(1);

    compute_kernel_hw_startup(cb_a, cb_b, cb_out);
    if (resident_b) cb_wait_front(cb_b, resident_b);

    for (uint32_t t = 0; t < count; ++t) {
        DeviceZoneScopedN("tile");  // the simulator's per-zone pipeline figures (tests/test_sim_api.py)
        cb_wait_front(cb_a, 1);
#if defined(OP_BINARY) || defined(OP_MATMUL) || defined(OP_SFPU_BINARY) || defined(OP_PACK_L1_ACC)
        if (!resident_b) cb_wait_front(cb_b, 1);
#endif
        cb_reserve_back(cb_out, 1);
        tile_regs_acquire();
#if defined(OP_COPY)
        copy_init(cb_a);
        copy_tile(cb_a, 0, 0);
#elif defined(OP_BINARY)
        BINARY_INIT(cb_a, cb_b);
        BINARY_CALL(cb_a, cb_b, 0, 0, 0);
#elif defined(OP_MATMUL)
        matmul_init(cb_a, cb_b, MATMUL_TRANSPOSE);
        matmul_tiles(cb_a, cb_b, 0, 0, 0);
#elif defined(OP_REDUCE)
        reduce_init<PoolType::REDUCE_POOL, ReduceDim::REDUCE_DIM>(cb_a, cb_b, cb_out);
        reduce_tile<PoolType::REDUCE_POOL, ReduceDim::REDUCE_DIM>(cb_a, cb_b, 0, 0, 0);
        reduce_uninit();
#elif defined(OP_TRANSPOSE)
        transpose_init(cb_a);
        transpose_tile(cb_a, 0, 0);
#elif defined(OP_SFPU)
        copy_init(cb_a);
        copy_tile(cb_a, 0, 0);
        SFPU_INIT();
        SFPU_CALL(0);
#elif defined(OP_SFPU_BINARY)
        copy_init(cb_a);
        copy_tile(cb_a, 0, 0);
        copy_init(cb_b);
        copy_tile(cb_b, 0, 1);
        SFPU_INIT();
        SFPU_CALL(0, 1, 0);
#elif defined(OP_EXP_PACKTHREAD)
        copy_init(cb_a);
        copy_tile(cb_a, 0, 0);
#elif defined(OP_PACK_L1_ACC)
        copy_init(cb_a);
        copy_tile(cb_a, 0, 0);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile<true>(0, cb_out, 0);
        tile_regs_release();
        tile_regs_acquire();
        copy_init(cb_b);
        copy_tile(cb_b, 0, 0);
#else
#error "define one OP_*"
#endif
        tile_regs_commit();
        tile_regs_wait();
#if defined(OP_EXP_PACKTHREAD)
        exp_packthread_tile_init();
        exp_packthread_tile(0);
#endif
#if defined(OP_PACK_L1_ACC)
        pack_reconfig_l1_acc(1);
        pack_tile<true>(0, cb_out, 0);
        pack_reconfig_l1_acc(0);
#else
        pack_tile(0, cb_out);
#endif
        tile_regs_release();
        cb_push_back(cb_out, 1);
        cb_pop_front(cb_a, 1);
#if defined(OP_BINARY) || defined(OP_MATMUL) || defined(OP_SFPU_BINARY) || defined(OP_PACK_L1_ACC)
        if (!resident_b) cb_pop_front(cb_b, 1);
#endif
    }
}
