// The Semaphore object (api/semaphore.h): a semaphore of this core named by id (or by a Metal 2.0
// binding token), with local and remote (NoC) operations. The operations themselves are in
// api/dataflow/semaphore_dm_impl.h; compute kernels cannot use semaphores in the simulator.
#pragma once

#include <cstdint>

#include "api/dataflow/semaphore_binding_token.h"
#include "ttsim/common.h"
#ifdef COMPILE_FOR_TRISC
namespace semaphore_detail {
// Compute-side semaphores (COMPUTE_ATOMIC) are a Quasar / Metal 2.0 feature the simulator lacks.
inline void compute_semaphore_unmodeled(const char* call) {
    TTSIM->fail(call, "not modeled by the simulator: semaphores in compute kernels");
}
template <ProgrammableCoreType>
inline std::uintptr_t sem_l1_offset(std::uint32_t, SemScope) {
    compute_semaphore_unmodeled("Semaphore");
    return 0;
}
template <ProgrammableCoreType>
inline void up(std::uintptr_t, SemScope, std::uint32_t) { compute_semaphore_unmodeled("Semaphore::up"); }
template <ProgrammableCoreType>
inline void down(std::uintptr_t, SemScope, std::uint32_t) { compute_semaphore_unmodeled("Semaphore::down"); }
template <ProgrammableCoreType>
inline void wait(std::uintptr_t, SemScope, std::uint32_t) { compute_semaphore_unmodeled("Semaphore::wait"); }
template <ProgrammableCoreType>
inline void wait_min(std::uintptr_t, SemScope, std::uint32_t) { compute_semaphore_unmodeled("Semaphore::wait_min"); }
template <ProgrammableCoreType>
inline void wait_not_full(std::uintptr_t, SemScope, std::uint32_t) {
    compute_semaphore_unmodeled("Semaphore::wait_not_full");
}
template <ProgrammableCoreType>
inline void set(std::uintptr_t, SemScope, std::uint32_t) { compute_semaphore_unmodeled("Semaphore::set"); }
template <ProgrammableCoreType>
inline std::uint32_t current(std::uintptr_t, SemScope) {
    compute_semaphore_unmodeled("Semaphore::value");
    return 0;
}
}  // namespace semaphore_detail
#else
#include "api/dataflow/semaphore_dm_impl.h"
#endif

template <ProgrammableCoreType core_type = ProgrammableCoreType::TENSIX>
class Semaphore {
    template <ProgrammableCoreType>
    friend class Semaphore;

public:
    explicit Semaphore(SemaphoreBindingToken token) :
        handle_(semaphore_detail::sem_l1_offset<core_type>(token.id, token.scope)) {}
    explicit Semaphore(std::uint32_t semaphore_id) :
        handle_(semaphore_detail::sem_l1_offset<core_type>(semaphore_id, SemScope::LOCAL_NONATOMIC)) {
#ifdef COMPILE_FOR_TRISC
        static_assert(semaphore_detail::always_false<core_type>,
                      "a compute semaphore cannot be built from a runtime semaphore id");
#endif
    }

    void up(std::uint32_t value) { semaphore_detail::up<core_type>(handle_, scope_, value); }
    void down(std::uint32_t value) { semaphore_detail::down<core_type>(handle_, scope_, value); }
    void wait(std::uint32_t value) const { semaphore_detail::wait<core_type>(handle_, scope_, value); }
    void wait_min(std::uint32_t value) const { semaphore_detail::wait_min<core_type>(handle_, scope_, value); }
#ifdef COMPILE_FOR_TRISC
    void wait_not_full(std::uint32_t n = 1) const { semaphore_detail::wait_not_full<core_type>(handle_, scope_, n); }
#endif
    void set(std::uint32_t value) { semaphore_detail::set<core_type>(handle_, scope_, value); }
    std::uint32_t value() const { return semaphore_detail::current<core_type>(handle_, scope_); }

#ifndef COMPILE_FOR_TRISC
    void up(const Noc& noc, std::uint32_t noc_x, std::uint32_t noc_y, std::uint32_t value,
            std::uint8_t vc = NOC_UNICAST_WRITE_VC) {
        semaphore_detail::up_remote<core_type>(handle_, scope_, noc, noc_x, noc_y, value, vc);
    }

    template <ProgrammableCoreType dst_core_type = core_type>
    void relay_unicast(const Noc& noc, const Semaphore<dst_core_type>& dst_sem, std::uint32_t noc_x,
                       std::uint32_t noc_y) {
        semaphore_detail::relay_unicast(handle_, dst_sem.handle_, noc, noc_x, noc_y);
    }

    template <NocOptions opts = NocOptions::DEFAULT>
    void set_multicast(const Noc& noc, std::uint32_t noc_x_start, std::uint32_t noc_y_start, std::uint32_t noc_x_end,
                       std::uint32_t noc_y_end, std::uint32_t num_dests, bool linked = false) {
        semaphore_detail::set_multicast<opts>(handle_, noc, noc_x_start, noc_y_start, noc_x_end, noc_y_end, num_dests,
                                              linked);
    }

    template <NocOptions opts = NocOptions::DEFAULT, ProgrammableCoreType dst_core_type = core_type>
    void relay_multicast(const Noc& noc, const Semaphore<dst_core_type>& dst_sem, std::uint32_t noc_x_start,
                         std::uint32_t noc_y_start, std::uint32_t noc_x_end, std::uint32_t noc_y_end,
                         std::uint32_t num_dests, bool linked = false) {
        semaphore_detail::relay_multicast<opts>(handle_, dst_sem.handle_, noc, noc_x_start, noc_y_start, noc_x_end,
                                                noc_y_end, num_dests, linked);
    }

    void inc_multicast(const Noc& noc, std::uint32_t noc_x_start, std::uint32_t noc_y_start, std::uint32_t noc_x_end,
                       std::uint32_t noc_y_end, std::uint32_t value, std::uint32_t num_dests) {
        semaphore_detail::inc_multicast(handle_, noc, noc_x_start, noc_y_start, noc_x_end, noc_y_end, value, num_dests);
    }
#endif

private:
    std::uintptr_t handle_;
#ifdef COMPILE_FOR_TRISC
    static constexpr SemScope scope_ = SemScope::COMPUTE_ATOMIC;
#else
    static constexpr SemScope scope_ = SemScope::LOCAL_NONATOMIC;
#endif
};
