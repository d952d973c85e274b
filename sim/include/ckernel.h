// What kernels reach through tt-llk's ckernel.h: namespace ckernel with the LLK enums (llk_defs.h) and
// the definitions of ckernel_defs.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ckernel_defs.h"
#include "ckernel_structs.h"
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

// The Tensix semaphores the compute threads (unpack, math, pack) synchronise through. The simulator runs
// the three threads of a compute kernel in one fiber, in program order, so a post always happens before
// the waits that follow it in the source; a wait that would block (nothing posted yet, or the semaphore
// full) needs another thread to run concurrently, which the simulator cannot do, so it stops the run.
namespace ttsim_t6 {
struct Sem {
    std::uint8_t value = 0, max = semaphore::SEMAPHORE_MAX_VALUE;
};
inline Sem sems[semaphore::NUM_SEMAPHORES];
inline Sem& at(std::uint8_t index, const char* call) {
    if (index >= semaphore::NUM_SEMAPHORES) TTSIM->fail(call, "semaphore index out of range");
    return sems[index % semaphore::NUM_SEMAPHORES];
}
}  // namespace ttsim_t6

inline void t6_semaphore_init(const std::uint8_t index, const std::uint8_t min_value, const std::uint8_t max_value) {
    auto& s = ttsim_t6::at(index, "t6_semaphore_init");
    s.value = min_value;
    s.max = max_value;
}
template <std::uint32_t WaitRes = p_stall::NONE>
inline void t6_semaphore_post(const std::uint8_t index) {
    auto& s = ttsim_t6::at(index, "t6_semaphore_post");
    if (s.value >= s.max) {
        TTSIM->fail("t6_semaphore_post", "not modeled by the simulator: a post past the semaphore's maximum "
                                         "(the device's behaviour there is not documented)");
    }
    ++s.value;
}
template <std::uint32_t WaitRes = p_stall::NONE>
inline void t6_semaphore_get(const std::uint8_t index) {
    auto& s = ttsim_t6::at(index, "t6_semaphore_get");
    if (s.value > 0) --s.value;
}
template <std::uint32_t WaitRes>
inline void t6_semaphore_wait_on_zero(const std::uint8_t index) {
    if (ttsim_t6::at(index, "t6_semaphore_wait_on_zero").value == 0) {
        TTSIM->fail("t6_semaphore_wait_on_zero", "not modeled by the simulator: the wait needs a post from a compute "
                                                 "thread that runs later in program order");
    }
}
template <std::uint32_t WaitRes>
inline void t6_semaphore_wait_on_max(const std::uint8_t index) {
    const auto& s = ttsim_t6::at(index, "t6_semaphore_wait_on_max");
    if (s.value >= s.max) {
        TTSIM->fail("t6_semaphore_wait_on_max", "not modeled by the simulator: the wait needs a get from a compute "
                                                "thread that runs later in program order");
    }
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
