// Division of two Int32 DST tiles on the SFPU (api/compute/div_int32_sfpu.h): the quotient as an fp32
// value (as ttnn's integer division returns float), a / b in double rounded to fp32 (tt-llk converts
// both to float and multiplies by a reciprocal: a documented difference of about an ulp).
// Cost: a reciprocal plus conversions (estimate).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::div_int32 {
inline uint32_t quotient(uint32_t a, uint32_t b, const uint32_t*) {
    return sfpu::as_word(float(double(int32_t(a)) / double(int32_t(b))));
}
constexpr uint64_t kCost = sfpu_cost::kRecip + 2 * sfpu_cost::kConvert;
}  // namespace ttsim::div_int32

namespace ckernel {

ALWI void div_int32_tile_init() { ttsim::sfpu::setup("div_int32"); }
ALWI void div_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::div_int32::quotient>("div_int32_tile", "div_int32", ttsim::div_int32::kCost, idst0, idst1,
                                                          odst, false);
}

}  // namespace ckernel
