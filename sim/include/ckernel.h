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

// The mailboxes between a core's RISC-Vs (a data-movement kernel handing a value to each TRISC of the
// compute kernel): not modeled by the simulator, so both ends stop the run.
inline void mailbox_write(const std::uint8_t thread, const std::uint32_t data) {
    (void)thread;
    (void)data;
    TTSIM->fail("mailbox_write", "not modeled by the simulator: mailboxes between a core's RISC-Vs");
}
inline std::uint32_t mailbox_read(const std::uint8_t thread) {
    (void)thread;
    TTSIM->fail("mailbox_read", "not modeled by the simulator: mailboxes between a core's RISC-Vs");
    return 0;
}

}  // namespace ckernel
