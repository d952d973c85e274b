// A scope guard that runs a release action when it goes out of scope (api/lock.h). On the device the
// release flushes caches or records profiler events; the simulator's L1 is coherent, so the actions
// the simulator's own headers pass are empty or bookkeeping only.
#pragma once

template <typename ReleaseFunc>
class Lock {
public:
    inline __attribute__((always_inline)) Lock(ReleaseFunc release_func) : release_func_(release_func) {}
    inline __attribute__((always_inline)) ~Lock() { release_func_(); }
    Lock(const Lock&) = delete;
    Lock(Lock&&) = delete;
    Lock& operator=(const Lock&) = delete;
    Lock& operator=(Lock&&) = delete;

private:
    ReleaseFunc release_func_;
};
