// Definitions shared by the simulator's kernel headers: the macros, enums and constants that the
// TT-Metalium kernel API headers make visible to kernels, with the same names and values.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ttsim/kernel_api.h"

#ifndef FORCE_INLINE
#define FORCE_INLINE inline __attribute__((always_inline))
#endif
#ifndef ALWI
#define ALWI inline __attribute__((always_inline))
#endif
#ifndef tt_l1_ptr
#define tt_l1_ptr
#endif

// A compute kernel runs its unpack, math and pack parts in one simulator fiber, so all three
// thread-selection macros keep their argument.
#ifndef MATH
#define MATH(...) __VA_ARGS__
#define PACK(...) __VA_ARGS__
#define UNPACK(...) __VA_ARGS__
#endif

#ifndef NOC_INDEX
#define NOC_INDEX 0
#endif
constexpr uint8_t noc_index = NOC_INDEX;

#ifndef DST_ACCUM_MODE
#define DST_ACCUM_MODE false
#endif
#ifndef APPROX
#define APPROX false
#endif

namespace tt {
enum CBIndex : uint8_t {
    c_0 = 0, c_1, c_2, c_3, c_4, c_5, c_6, c_7, c_8, c_9, c_10, c_11, c_12, c_13, c_14, c_15,
    c_16, c_17, c_18, c_19, c_20, c_21, c_22, c_23, c_24, c_25, c_26, c_27, c_28, c_29, c_30, c_31,
    SIZE = 32
};
}  // namespace tt

enum class DataFormat : uint8_t {
    Float32 = 0,
    Float16 = 1,
    Bfp8 = 2,
    Bfp4 = 3,
    Tf32 = 4,
    Float16_b = 5,
    Bfp8_b = 6,
    Bfp4_b = 7,
    Int32 = 8,
    UInt16 = 9,
    Lf8 = 10,
    Bfp2 = 11,
    Int8 = 14,
    Bfp2_b = 15,
    UInt32 = 24,
    UInt8 = 30,
    Invalid = 0xff
};

enum class ProgrammableCoreType { TENSIX = 0, ACTIVE_ETH = 1, IDLE_ETH = 2, COUNT = 3 };
// The LLK enums (VectorMode, PoolType, ReduceDim, BroadcastType, ...) live in namespace ckernel as on the
// device; compute kernels see the whole namespace (api/compute/common_globals.h), the SFPU helpers here
// take a VectorMode.
#include "llk_defs.h"
using ckernel::VectorMode;
// The faces an SFPU op covers in a vector mode (tt-llk's unary SFPU params: R = faces 0 and 1, the top 16
// rows; C = faces 0 and 2, the left 16 columns; the others the whole tile), as a bit per face.
inline uint32_t sfpu_faces(VectorMode mode) {
    return mode == VectorMode::R ? 0x3u : mode == VectorMode::C ? 0x5u : 0xFu;
}

namespace p_sfpu {
constexpr uint16_t kCONST_1_FP16B = 0x3F80;
}

namespace ttsim::detail {
// Dataflow kernels address their own L1 by raw 32-bit pointers, as on the device.
inline uint32_t l1_addr_of(const volatile void* p) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p)); }
}  // namespace ttsim::detail
