// Least common multiple of two Int32 DST tiles on the SFPU (api/compute/lcm.h): |a * b| / gcd(a, b),
// wrapping to 32 bits, lcm with 0 = 0. Exact. Cost: a gcd plus an integer multiply (estimate).
#pragma once

#include "api/compute/gcd.h"

namespace ttsim::lcm {
inline uint32_t words(uint32_t a, uint32_t b, const uint32_t*) {
    const uint32_t g = gcd::of(a, b);
    if (g == 0) return 0;
    const uint32_t x = int32_t(a) < 0 ? 0u - a : a, y = int32_t(b) < 0 ? 0u - b : b;
    return (x / g) * y;
}
}  // namespace ttsim::lcm

namespace ckernel {

ALWI void lcm_tile_init() { ttsim::sfpu::setup("lcm"); }
ALWI void lcm_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::lcm::words>("lcm_tile", "lcm", ttsim::gcd::kCost + ttsim::sfpu_cost::kIntMul, idst0, idst1,
                                                 odst);
}

}  // namespace ckernel
