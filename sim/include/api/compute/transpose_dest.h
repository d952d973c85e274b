// Transpose a tile in DST in place (api/compute/transpose_dest.h): the whole 32x32 tile when
// transpose_of_faces, else each 16x16 face where it lies. is_32bit: DST holds 32-bit values
// (fp32_dest_acc_en), which must then be moved whole.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

// Math-thread set-up of the transpose sequence; nothing in the simulator depends on it.
template <bool is_32bit = false, bool transpose_of_faces = true>
ALWI void transpose_dest_init([[maybe_unused]] uint32_t operand = 0) {}
template <bool is_32bit = false, bool transpose_of_faces = true>
ALWI void transpose_dest(uint32_t idst) {
    TTSIM->transpose_dest(idst, transpose_of_faces, is_32bit);
}

}  // namespace ckernel
