// What kernels reach through tt-llk's ckernel.h: namespace ckernel with the LLK enums (llk_defs.h) and
// the definitions of ckernel_defs.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ckernel_defs.h"
#include "llk_defs.h"
#include "ttsim/common.h"

namespace ckernel {

// A load the device orders after earlier stores (it drains the store queue); the simulator's memory
// is ordered already, so it is a plain volatile load.
template <typename T, typename = std::enable_if_t<std::is_trivially_copyable_v<T>>>
inline T load_blocking(volatile T* ptr) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "load_blocking: operand must be 16-bit or 32-bit");
    return *ptr;
}

}  // namespace ckernel
