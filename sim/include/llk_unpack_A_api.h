// The unpack half of a copy as kernels call it directly (Wormhole's llk_unpack_A_api.h). The init sets
// what copy_tile does: a plain copy, or, with both the face order and the inside of each face
// transposed, the tile's transpose (transpose_init's configuration). Other combinations (faces
// transposed in place only, broadcasts, dest accumulation) are not modeled and stop the run.
#pragma once

#include <cstdint>

#include "llk_defs.h"
#include "ttsim/common.h"

template <ckernel::BroadcastType BType = ckernel::BroadcastType::NONE, bool acc_to_dest = false,
          ckernel::EltwiseBinaryReuseDestType binary_reuse_dest = ckernel::EltwiseBinaryReuseDestType::NONE,
          bool unpack_to_dest = false>
inline void llk_unpack_A_init(const std::uint32_t transpose_of_faces = 0, const std::uint32_t within_face_16x16_transpose = 0,
                              const std::uint32_t operand = 0) {
    static_assert(BType == ckernel::BroadcastType::NONE && !acc_to_dest &&
                      binary_reuse_dest == ckernel::EltwiseBinaryReuseDestType::NONE,
                  "the simulator models llk_unpack_A_init for plain and transposing copies only");
    if (transpose_of_faces && within_face_16x16_transpose) {
        TTSIM->fpu_init(ttsim::FpuOp::Transpose, ttsim::Bcast::None, operand, operand, 0);
    } else if (!transpose_of_faces && !within_face_16x16_transpose) {
        TTSIM->fpu_init(ttsim::FpuOp::Copy, ttsim::Bcast::None, operand, operand, 0);
    } else {
        TTSIM->fail("llk_unpack_A_init", "not modeled by the simulator: transposing only the face order or only inside faces");
    }
}
