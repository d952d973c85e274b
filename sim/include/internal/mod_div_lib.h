// Division and remainder by compile-time constants (tt-metal's internal/mod_div_lib.h). The device has
// no divider and uses multiply-shift forms exact for every 32-bit input; the host divides directly,
// which gives the same quotients.
#pragma once

#include <cstdint>

inline __attribute__((always_inline)) unsigned int mulsi3(unsigned int a, unsigned int b) { return a * b; }

#define TTSIM_FAST_UDIV(N) \
    inline __attribute__((always_inline)) uint32_t fast_udiv_##N(uint32_t n) { return n / N##u; }
TTSIM_FAST_UDIV(7)
TTSIM_FAST_UDIV(12)
TTSIM_FAST_UDIV(20)
TTSIM_FAST_UDIV(28)
TTSIM_FAST_UDIV(48)
TTSIM_FAST_UDIV(56)
TTSIM_FAST_UDIV(63)
TTSIM_FAST_UDIV(70)
TTSIM_FAST_UDIV(72)
TTSIM_FAST_UDIV(80)
TTSIM_FAST_UDIV(94)
TTSIM_FAST_UDIV(108)
TTSIM_FAST_UDIV(110)
TTSIM_FAST_UDIV(117)
TTSIM_FAST_UDIV(120)
TTSIM_FAST_UDIV(124)
TTSIM_FAST_UDIV(126)
TTSIM_FAST_UDIV(130)
TTSIM_FAST_UDIV(140)
#undef TTSIM_FAST_UDIV

template <uint32_t d>
inline __attribute__((always_inline)) uint32_t udivsi3_const_divisor(uint32_t n) {
    return n / d;
}
template <uint32_t d>
inline __attribute__((always_inline)) uint32_t umodsi3_const_divisor(uint32_t a) {
    return a % d;
}
