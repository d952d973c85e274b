// The ReLU family on the SFPU, in place on a DST tile (api/compute/eltwise_unary/relu.h): exact.
// relu: max(x, 0); relu_min: max(x, lower); relu_max: min(max(x, 0), upper); leaky_relu: x, or
// slope * x below zero. Thresholds and the slope are fp32 bits, or the integer for the integer forms.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::relu {
using sfpu::as_float;
inline float relu_min(float x, const uint32_t* p) { return std::fmax(x, as_float(p[0])); }
inline float relu_max(float x, const uint32_t* p) { return std::fmin(std::fmax(x, 0.0f), as_float(p[0])); }
inline float leaky(float x, const uint32_t* p) { return x < 0.0f ? x * as_float(p[0]) : x; }
inline uint32_t relu_min_int32(uint32_t x, const uint32_t* p) { return int32_t(x) > int32_t(p[0]) ? x : p[0]; }
inline uint32_t relu_min_uint(uint32_t x, const uint32_t* p) { return x > p[0] ? x : p[0]; }
inline uint32_t relu_max_int32(uint32_t x, const uint32_t* p) {
    const int32_t v = int32_t(x) < 0 ? 0 : int32_t(x);
    return uint32_t(v > int32_t(p[0]) ? int32_t(p[0]) : v);
}
inline uint32_t relu_max_uint(uint32_t x, const uint32_t* p) { return x > p[0] ? p[0] : x; }
}  // namespace ttsim::relu

namespace ckernel {

// relu_tile shares relu_min's set-up (a threshold of 0).
ALWI void relu_tile_init() { ttsim::sfpu::setup("relu_min"); }
ALWI void relu_min_tile_init() { ttsim::sfpu::setup("relu_min"); }
ALWI void relu_max_tile_init() { ttsim::sfpu::setup("relu_max"); }
ALWI void leaky_relu_tile_init() { ttsim::sfpu::setup("lrelu"); }

ALWI void relu_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::relu::relu_min>("relu_tile", "relu_min", ttsim::sfpu_cost::kSimple, idst, VectorMode::RC, 0);
}
ALWI void relu_min_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::relu::relu_min>("relu_min_tile", "relu_min", ttsim::sfpu_cost::kSimple, idst, VectorMode::RC,
                                              param0);
}
ALWI void relu_max_tile(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary<ttsim::relu::relu_max>("relu_max_tile", "relu_max", ttsim::sfpu_cost::kSimple, idst, VectorMode::RC,
                                              param0);
}
ALWI void leaky_relu_tile(uint32_t idst, uint32_t slope = 0) {
    ttsim::sfpu::unary<ttsim::relu::leaky>("leaky_relu_tile", "lrelu", ttsim::sfpu_cost::kSimple, idst, VectorMode::RC, slope);
}
ALWI void relu_tile_int32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::relu::relu_min_int32>("relu_tile_int32", "relu_min", ttsim::sfpu_cost::kSimple, idst,
                                                          true, 0);
}
ALWI void relu_min_tile_int32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::relu::relu_min_int32>("relu_min_tile_int32", "relu_min", ttsim::sfpu_cost::kSimple,
                                                          idst, true, param0);
}
ALWI void relu_min_tile_uint32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::relu::relu_min_uint>("relu_min_tile_uint32", "relu_min", ttsim::sfpu_cost::kSimple,
                                                         idst, true, param0);
}
ALWI void relu_min_tile_uint16(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::relu::relu_min_uint>("relu_min_tile_uint16", "relu_min", ttsim::sfpu_cost::kSimple,
                                                         idst, true, param0);
}
ALWI void relu_max_tile_int32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::relu::relu_max_int32>("relu_max_tile_int32", "relu_max", ttsim::sfpu_cost::kSimple,
                                                          idst, true, param0);
}
ALWI void relu_max_tile_uint32(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::relu::relu_max_uint>("relu_max_tile_uint32", "relu_max", ttsim::sfpu_cost::kSimple,
                                                         idst, true, param0);
}
ALWI void relu_max_tile_uint16(uint32_t idst, uint32_t param0) {
    ttsim::sfpu::unary_words<ttsim::relu::relu_max_uint>("relu_max_tile_uint16", "relu_max", ttsim::sfpu_cost::kSimple,
                                                         idst, true, param0);
}

// The pack thread's forms: declared only.
ALWI void relu_max_tile_init_pack() { TTSIM_NOT_MODELED("relu_max_tile_init_pack", "the pack thread runs only exp (exp_packthread_tile)"); }
ALWI void relu_max_tile_pack(uint32_t, uint32_t) {
    TTSIM_NOT_MODELED("relu_max_tile_pack", "the pack thread runs only exp (exp_packthread_tile)");
}

}  // namespace ckernel
