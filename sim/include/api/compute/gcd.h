// Greatest common divisor of two Int32 DST tiles on the SFPU (api/compute/gcd.h): of the absolute
// values, gcd(0, 0) = 0. Exact. Cost: tt-llk runs a binary GCD loop of up to ~31 steps of a few
// instructions (estimate: 30 passes, 500-1,500 cycles).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::gcd {
inline uint32_t of(uint32_t a, uint32_t b) {
    uint32_t x = int32_t(a) < 0 ? 0u - a : a, y = int32_t(b) < 0 ? 0u - b : b;
    while (y != 0) {
        const uint32_t t = x % y;
        x = y;
        y = t;
    }
    return x;
}
inline uint32_t words(uint32_t a, uint32_t b, const uint32_t*) { return of(a, b); }
constexpr uint64_t kCost = 30 * sfpu_cost::kPass;
}  // namespace ttsim::gcd

namespace ckernel {

ALWI void gcd_tile_init() { ttsim::sfpu::setup("gcd"); }
ALWI void gcd_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::gcd::words>("gcd_tile", "gcd", ttsim::gcd::kCost, idst0, idst1, odst);
}

}  // namespace ckernel
