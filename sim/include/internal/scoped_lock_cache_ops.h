// Cache maintenance around a scoped lock of an L1 region (internal/scoped_lock_cache_ops.h). Only
// Quasar's data-movement cores cache L1; on Wormhole, and in the simulator's coherent host memory,
// there is nothing to invalidate or flush.
#pragma once

#include <cstdint>

inline __attribute__((always_inline)) void scoped_lock_acquire_cache_ops(uintptr_t addr, uint32_t num_bytes) {
    (void)addr;
    (void)num_bytes;
}
inline __attribute__((always_inline)) void scoped_lock_release_cache_ops(uintptr_t addr, uint32_t num_bytes) {
    (void)addr;
    (void)num_bytes;
}
