// Row-max over a block of tiles in one call (api/compute/reduce_custom.h, used by sdpa): DST[idst]'s
// column 0 gets the maximum of each row across block_ct_dim tiles of icb from row_start_index on, times
// the scaler's [0][0], taken together with what DST[idst] held; the same values as block_ct_dim calls of
// reduce_tile<MAX, REDUCE_ROW> into one DST tile, and modeled as those calls. respect_trigger orders
// the unpacker after the packer on the device (a semaphore between the two threads); the simulator runs
// the threads of a compute kernel in program order, so the order holds without it. Only full 32x32
// tiles are modeled (tensor_shape must be DEFAULT_TENSOR_SHAPE).
#pragma once

#include "api/compute/reduce.h"
#include "tensor_shape.h"

namespace ttsim::detail {
// The block width the *_runtime init set up, which reduce_block_max_row_runtime reads.
inline uint32_t reduce_block_ct_dim = 0;

inline void require_full_tiles(const ckernel::TensorShape& shape, const char* call) {
    if (!ckernel::is_full_tile(shape)) TTSIM->fail(call, "not modeled by the simulator: tiles other than 32x32");
}
inline void reduce_block_max_row_setup(const ckernel::TensorShape& shape, uint32_t block_ct_dim, int icb, int icb_scaler) {
    require_full_tiles(shape, "reduce_block_max_row_init");
    reduce_block_ct_dim = block_ct_dim;
    TTSIM->fpu_init(ttsim::FpuOp::Reduce, ttsim::Bcast::None, icb, icb_scaler,
                    reduce_flags<ckernel::PoolType::MAX, ckernel::ReduceDim::REDUCE_ROW>());
}
inline void reduce_block_max_row_run(const ckernel::TensorShape& shape, uint32_t block_ct_dim, uint32_t icb,
                                     uint32_t icb_scaler, uint32_t row_start_index, uint32_t idst) {
    require_full_tiles(shape, "reduce_block_max_row");
    for (uint32_t t = 0; t < block_ct_dim; ++t) {
        TTSIM->reduce_tile(int(ckernel::PoolType::MAX), int(ckernel::ReduceDim::REDUCE_ROW), icb, icb_scaler,
                           row_start_index + t, 0, idst);
    }
}
}  // namespace ttsim::detail

namespace ckernel {

template <std::uint32_t block_ct_dim, bool respect_trigger = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block_max_row_init(const ckernel::TensorShape& tensor_shape, std::uint32_t ocb) {
    (void)ocb;
    ttsim::detail::reduce_block_max_row_setup(tensor_shape, block_ct_dim, -1, -1);
}
template <std::uint32_t block_ct_dim, bool respect_trigger = false, std::uint32_t num_faces = 4>
ALWI void reduce_block_max_row_init(std::uint32_t ocb) {
    reduce_block_max_row_init<block_ct_dim, respect_trigger>(tensor_shape_from_num_faces(MAX_FACE_R_DIM, num_faces), ocb);
}
template <std::uint32_t block_ct_dim, bool respect_trigger = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block_max_row(const ckernel::TensorShape& tensor_shape, std::uint32_t icb, std::uint32_t icb_scaler,
                               std::uint32_t row_start_index, std::uint32_t idst) {
    ttsim::detail::reduce_block_max_row_run(tensor_shape, block_ct_dim, icb, icb_scaler, row_start_index, idst);
}
template <std::uint32_t block_ct_dim, bool respect_trigger = false, std::uint32_t num_faces = 4>
ALWI void reduce_block_max_row(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t row_start_index,
                               std::uint32_t idst) {
    reduce_block_max_row<block_ct_dim, respect_trigger>(tensor_shape_from_num_faces(MAX_FACE_R_DIM, num_faces), icb,
                                                        icb_scaler, row_start_index, idst);
}
// The short and minimal re-inits restore the reduce configuration after other operations: the same set-up.
template <std::uint32_t block_ct_dim, bool respect_trigger = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block_max_row_reinit_short(const ckernel::TensorShape& tensor_shape, std::uint32_t ocb) {
    reduce_block_max_row_init<block_ct_dim, respect_trigger, is_fp32_dest_acc_en>(tensor_shape, ocb);
}
template <std::uint32_t block_ct_dim, bool respect_trigger = false, std::uint32_t num_faces = 4>
ALWI void reduce_block_max_row_reinit_short(std::uint32_t ocb) {
    reduce_block_max_row_reinit_short<block_ct_dim, respect_trigger>(tensor_shape_from_num_faces(MAX_FACE_R_DIM, num_faces),
                                                                     ocb);
}
template <std::uint32_t block_ct_dim, bool respect_trigger = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block_max_row_reinit_minimal(const ckernel::TensorShape& tensor_shape, std::uint32_t ocb) {
    reduce_block_max_row_init<block_ct_dim, respect_trigger, is_fp32_dest_acc_en>(tensor_shape, ocb);
}
template <std::uint32_t block_ct_dim, bool respect_trigger = false, std::uint32_t num_faces = 4>
ALWI void reduce_block_max_row_reinit_minimal(std::uint32_t ocb) {
    reduce_block_max_row_reinit_minimal<block_ct_dim, respect_trigger>(
        tensor_shape_from_num_faces(MAX_FACE_R_DIM, num_faces), ocb);
}
template <bool respect_trigger = false>
ALWI void reduce_block_max_row_uninit(std::uint32_t icb) {
    reduce_uninit(icb);
}

// The *_runtime forms take the block width at run time (from the init for reduce_block_max_row_runtime).
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block_max_row_reinit_minimal_runtime(const ckernel::TensorShape& tensor_shape, std::uint32_t ocb,
                                                      std::uint32_t block_ct_dim, bool respect_trigger = false) {
    (void)ocb;
    (void)respect_trigger;
    ttsim::detail::reduce_block_max_row_setup(tensor_shape, block_ct_dim, -1, -1);
}
ALWI void reduce_block_max_row_reinit_minimal_runtime(std::uint32_t ocb, std::uint32_t block_ct_dim,
                                                      bool respect_trigger = false, std::uint32_t num_faces = 4) {
    reduce_block_max_row_reinit_minimal_runtime(tensor_shape_from_num_faces(MAX_FACE_R_DIM, num_faces), ocb, block_ct_dim,
                                                respect_trigger);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block_max_row_reinit_short_runtime(const ckernel::TensorShape& tensor_shape, std::uint32_t ocb,
                                                    std::uint32_t block_ct_dim, bool respect_trigger = false) {
    reduce_block_max_row_reinit_minimal_runtime<is_fp32_dest_acc_en>(tensor_shape, ocb, block_ct_dim, respect_trigger);
}
ALWI void reduce_block_max_row_reinit_short_runtime(std::uint32_t ocb, std::uint32_t block_ct_dim,
                                                    bool respect_trigger = false, std::uint32_t num_faces = 4) {
    reduce_block_max_row_reinit_short_runtime(tensor_shape_from_num_faces(MAX_FACE_R_DIM, num_faces), ocb, block_ct_dim,
                                              respect_trigger);
}
ALWI void reduce_block_max_row_init_runtime(const ckernel::TensorShape& tensor_shape, std::uint32_t ocb,
                                            std::uint32_t block_ct_dim, std::uint32_t icb, std::uint32_t icb_scaler,
                                            bool respect_trigger = false) {
    (void)ocb;
    (void)respect_trigger;
    ttsim::detail::reduce_block_max_row_setup(tensor_shape, block_ct_dim, icb, icb_scaler);
}
ALWI void reduce_block_max_row_init_runtime(std::uint32_t ocb, std::uint32_t block_ct_dim, std::uint32_t icb,
                                            std::uint32_t icb_scaler, bool respect_trigger = false,
                                            std::uint32_t num_faces = 4) {
    reduce_block_max_row_init_runtime(tensor_shape_from_num_faces(MAX_FACE_R_DIM, num_faces), ocb, block_ct_dim, icb,
                                      icb_scaler, respect_trigger);
}
// overlap_first_half splits the block between the math and pack threads on the device; not modeled.
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block_max_row_runtime(const ckernel::TensorShape& tensor_shape, std::uint32_t icb,
                                       std::uint32_t icb_scaler, std::uint32_t row_start_index, std::uint32_t idst,
                                       bool respect_trigger = false, bool overlap_first_half = false) {
    (void)respect_trigger;
    if (overlap_first_half) {
        TTSIM->fail("reduce_block_max_row_runtime", "not modeled by the simulator: overlap_first_half");
    }
    ttsim::detail::reduce_block_max_row_run(tensor_shape, ttsim::detail::reduce_block_ct_dim, icb, icb_scaler,
                                            row_start_index, idst);
}
ALWI void reduce_block_max_row_runtime(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t row_start_index,
                                       std::uint32_t idst, bool respect_trigger = false, bool overlap_first_half = false,
                                       std::uint32_t num_faces = 4) {
    reduce_block_max_row_runtime(tensor_shape_from_num_faces(MAX_FACE_R_DIM, num_faces), icb, icb_scaler,
                                 row_start_index, idst, respect_trigger, overlap_first_half);
}
ALWI void reduce_block_max_row_uninit_runtime(std::uint32_t icb, bool respect_trigger = false,
                                              bool overlap_first_half = false) {
    (void)respect_trigger;
    (void)overlap_first_half;
    reduce_uninit(icb);
}

}  // namespace ckernel
