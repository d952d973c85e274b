// RISC-V attributes and small L1 helpers (internal/risc_attribs.h). The device compiler marks L1 and
// register pointers with address-space attributes; the host compiler needs none, so the markers are
// empty (ttsim/common.h).
#ifndef _RISC_ATTRIBS_H_
#define _RISC_ATTRIBS_H_

#include <stddef.h>
#include <stdint.h>

#include "ttsim/common.h"

#ifndef tt_reg_ptr
#define tt_reg_ptr
#endif

union tt_uint64_t {
    uint64_t v;
    struct {
        uint32_t hi;
        uint32_t lo;
    };
};

enum class L1WordCount : int32_t {};

constexpr L1WordCount l1_word_count_from_bytes(size_t bytes) { return static_cast<L1WordCount>(bytes / 4); }

template <typename T>
constexpr L1WordCount l1_word_count_from_range(T* start, T* end) {
    static_assert(sizeof(T) == sizeof(uint32_t), "L1WordCount ranges must use 32-bit elements");
    return static_cast<L1WordCount>(end - start);
}

enum class InlineWriteDst : uint8_t { DEFAULT = 0, L1 = 1, REG = 2 };

// A 64-bit value read as two 32-bit words (L1 has no 64-bit loads on the device).
inline uint64_t tt_l1_load(tt_uint64_t tt_l1_ptr* p) {
    tt_uint64_t v;
    v.hi = p->hi;
    v.lo = p->lo;
    return v.v;
}
inline uint64_t tt_l1_load(volatile tt_uint64_t* tt_l1_ptr p) {
    tt_uint64_t v;
    v.hi = p->hi;
    v.lo = p->lo;
    return v.v;
}

#endif  // _RISC_ATTRIBS_H_
