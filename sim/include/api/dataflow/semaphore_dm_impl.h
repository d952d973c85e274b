// The data-movement side of the Semaphore class (api/semaphore.h): each operation is one of the
// simulator's semaphore calls (noc_semaphore_wait/set/inc ...), so it shares their checks, wake-up
// times and modeled cost. Wormhole data-movement kernels only see LOCAL_NONATOMIC semaphores: plain
// words in this core's L1 that this kernel updates by read-modify-write and other cores by NoC atomics.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/semaphore_binding_token.h"
#include "api/debug/assert.h"

namespace semaphore_detail {

inline void require_local_nonatomic(SemScope scope, const char* call) {
    if (scope != SemScope::LOCAL_NONATOMIC) {
        TTSIM->fail(call, "not modeled by the simulator: only LOCAL_NONATOMIC semaphores exist on a Wormhole "
                          "data-movement core");
    }
}

template <ProgrammableCoreType core_type>
inline std::uintptr_t sem_l1_offset(std::uint32_t id, SemScope scope) {
    require_local_nonatomic(scope, "Semaphore");
    return get_semaphore<core_type>(id);
}

inline volatile tt_l1_ptr std::uint32_t* local_ptr(std::uintptr_t l1_offset, SemScope) {
    return reinterpret_cast<volatile tt_l1_ptr std::uint32_t*>(l1_offset);
}

template <ProgrammableCoreType core_type>
inline std::uint32_t current(std::uintptr_t l1_offset, SemScope scope) {
    return *local_ptr(l1_offset, scope);
}

// A local read-modify-write; written through noc_semaphore_set so that a kernel waiting on this word
// wakes at this kernel's time.
template <ProgrammableCoreType core_type>
inline void up(std::uintptr_t l1_offset, SemScope scope, std::uint32_t value) {
    require_local_nonatomic(scope, "Semaphore::up");
    noc_semaphore_set(local_ptr(l1_offset, scope), *local_ptr(l1_offset, scope) + value);
}

template <ProgrammableCoreType core_type>
inline void down(std::uintptr_t l1_offset, SemScope scope, std::uint32_t value) {
    require_local_nonatomic(scope, "Semaphore::down");
    noc_semaphore_wait_min(local_ptr(l1_offset, scope), value);
    noc_semaphore_set(local_ptr(l1_offset, scope), *local_ptr(l1_offset, scope) - value);
}

template <ProgrammableCoreType core_type>
inline void wait(std::uintptr_t l1_offset, SemScope scope, std::uint32_t value) {
    noc_semaphore_wait(local_ptr(l1_offset, scope), value);
}

template <ProgrammableCoreType core_type>
inline void wait_min(std::uintptr_t l1_offset, SemScope scope, std::uint32_t value) {
    noc_semaphore_wait_min(local_ptr(l1_offset, scope), value);
}

template <ProgrammableCoreType core_type>
inline void set(std::uintptr_t l1_offset, SemScope scope, std::uint32_t value) {
    noc_semaphore_set(local_ptr(l1_offset, scope), value);
}

template <ProgrammableCoreType core_type>
inline void up_remote(std::uintptr_t l1_offset, SemScope scope, const Noc& noc, std::uint32_t noc_x,
                      std::uint32_t noc_y, std::uint32_t value, std::uint8_t vc) {
    require_local_nonatomic(scope, "Semaphore::up");
    noc_semaphore_inc(::get_noc_addr(noc_x, noc_y, l1_offset, noc.get_noc_id()), value, noc.get_noc_id(), vc);
}

inline void relay_unicast(std::uintptr_t src_l1_offset, std::uintptr_t dst_l1_offset, const Noc& noc,
                          std::uint32_t noc_x, std::uint32_t noc_y) {
    ASSERT(src_l1_offset != dst_l1_offset);
    noc_semaphore_set_remote(src_l1_offset, ::get_noc_addr(noc_x, noc_y, dst_l1_offset, noc.get_noc_id()),
                             noc.get_noc_id());
}

template <NocOptions opts>
inline void set_multicast(std::uintptr_t l1_offset, const Noc& noc, std::uint32_t noc_x_start,
                          std::uint32_t noc_y_start, std::uint32_t noc_x_end, std::uint32_t noc_y_end,
                          std::uint32_t num_dests, bool linked) {
    const std::uint64_t mcast =
        ::get_noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, l1_offset, noc.get_noc_id());
    if constexpr (has_flag(opts, NocOptions::MCAST_INCL_SRC)) {
        noc_semaphore_set_multicast_loopback_src(l1_offset, mcast, num_dests, linked, noc.get_noc_id());
    } else {
        noc_semaphore_set_multicast(l1_offset, mcast, num_dests, linked, noc.get_noc_id());
    }
}

template <NocOptions opts>
inline void relay_multicast(std::uintptr_t src_l1_offset, std::uintptr_t dst_l1_offset, const Noc& noc,
                            std::uint32_t noc_x_start, std::uint32_t noc_y_start, std::uint32_t noc_x_end,
                            std::uint32_t noc_y_end, std::uint32_t num_dests, bool linked) {
    ASSERT(src_l1_offset != dst_l1_offset);
    const std::uint64_t mcast =
        ::get_noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, dst_l1_offset, noc.get_noc_id());
    if constexpr (has_flag(opts, NocOptions::MCAST_INCL_SRC)) {
        noc_semaphore_set_multicast_loopback_src(src_l1_offset, mcast, num_dests, linked, noc.get_noc_id());
    } else {
        noc_semaphore_set_multicast(src_l1_offset, mcast, num_dests, linked, noc.get_noc_id());
    }
}

inline void inc_multicast(std::uintptr_t l1_offset, const Noc& noc, std::uint32_t noc_x_start,
                          std::uint32_t noc_y_start, std::uint32_t noc_x_end, std::uint32_t noc_y_end,
                          std::uint32_t value, std::uint32_t num_dests) {
    const std::uint64_t mcast =
        ::get_noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, l1_offset, noc.get_noc_id());
    noc_semaphore_inc_multicast(mcast, value, num_dests, noc.get_noc_id());
}

}  // namespace semaphore_detail
