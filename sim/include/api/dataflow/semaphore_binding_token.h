// Where a semaphore lives and how it is updated (api/dataflow/semaphore_binding_token.h), and the
// token a Metal 2.0 program generates for a named semaphore.
#pragma once

#include <cstdint>

enum class SemScope : uint8_t {
    LOCAL_NONATOMIC = 0,
    DM_LOCAL_CACHED = 1,
    EXTERNAL = 2,
    COMPUTE_ATOMIC = 3,
};

namespace semaphore_detail {
template <auto>
inline constexpr bool always_false = false;
}  // namespace semaphore_detail

struct SemaphoreBindingToken {
    std::uint32_t id;
    SemScope scope;
};
