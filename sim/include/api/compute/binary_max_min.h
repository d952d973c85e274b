// Element-wise max / min of two DST tiles on the SFPU (api/compute/binary_max_min.h): floats by value,
// Int32 (signed) and UInt32 (unsigned) words as integers. Exact.
#pragma once

#include <algorithm>

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

namespace ttsim::max_min {
inline float max(float a, float b, const uint32_t*) { return std::max(a, b); }
inline float min(float a, float b, const uint32_t*) { return std::min(a, b); }
inline uint32_t max_int32(uint32_t a, uint32_t b, const uint32_t*) { return int32_t(a) > int32_t(b) ? a : b; }
inline uint32_t min_int32(uint32_t a, uint32_t b, const uint32_t*) { return int32_t(a) < int32_t(b) ? a : b; }
inline uint32_t max_uint32(uint32_t a, uint32_t b, const uint32_t*) { return a > b ? a : b; }
inline uint32_t min_uint32(uint32_t a, uint32_t b, const uint32_t*) { return a < b ? a : b; }
}  // namespace ttsim::max_min

namespace ckernel {

ALWI void binary_max_tile_init() { ttsim::sfpu::setup("max"); }
ALWI void binary_max_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC) {
    ttsim::sfpu::binary<ttsim::max_min::max>("binary_max_tile", "max", ttsim::sfpu_cost::kSimple, idst0, idst1, odst,
                                            vector_mode);
}
ALWI void binary_min_tile_init() { ttsim::sfpu::setup("min"); }
ALWI void binary_min_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC) {
    ttsim::sfpu::binary<ttsim::max_min::min>("binary_min_tile", "min", ttsim::sfpu_cost::kSimple, idst0, idst1, odst,
                                            vector_mode);
}

ALWI void binary_max_int32_tile_init() { ttsim::sfpu::setup("max_int32"); }
ALWI void binary_max_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::max_min::max_int32>("binary_max_int32_tile", "max_int32", ttsim::sfpu_cost::kSimple,
                                                         idst0, idst1, odst);
}
ALWI void binary_min_int32_tile_init() { ttsim::sfpu::setup("min_int32"); }
ALWI void binary_min_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::max_min::min_int32>("binary_min_int32_tile", "min_int32", ttsim::sfpu_cost::kSimple,
                                                         idst0, idst1, odst);
}
ALWI void binary_max_uint32_tile_init() { ttsim::sfpu::setup("max_uint32"); }
ALWI void binary_max_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::max_min::max_uint32>("binary_max_uint32_tile", "max_uint32", ttsim::sfpu_cost::kSimple,
                                                          idst0, idst1, odst);
}
ALWI void binary_min_uint32_tile_init() { ttsim::sfpu::setup("min_uint32"); }
ALWI void binary_min_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttsim::sfpu::binary_words<ttsim::max_min::min_uint32>("binary_min_uint32_tile", "min_uint32", ttsim::sfpu_cost::kSimple,
                                                          idst0, idst1, odst);
}

}  // namespace ckernel
