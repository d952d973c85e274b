// Helpers for the kernel headers that define an SFPU operation as an elementwise function (see
// KernelApi::sfpu_eltwise). A header writes the element function as plain C++ next to its API call:
//
//   inline float sin_value(float x, const uint32_t*) { return std::sin(x); }
//   ALWI void sin_tile_init() { ttsim::sfpu::setup("sine"); }
//   ALWI void sin_tile(uint32_t idst) { ttsim::sfpu::unary<sin_value>("sin_tile", "sine", cost, idst); }
//
// The set-up name ties a call to its init (several inits may share one, as on the device).
// Float functions see DST's value (fp32; the simulator rounds the result to bf16 unless DST is
// fp32); word functions see DST's raw 32-bit words (integer data) and their result is kept as is.
#pragma once

#include <cmath>
#include <cstdint>

#include "ckernel_defs.h"
#include "ttsim/common.h"
#include "ttsim/sfpu_cost.h"

// The host's math.h defines M_PI and its relatives as macros; the device toolchain's does not, and
// tt-metal kernels declare their own (constexpr float M_PI = ...), so they must not leak from here.
#undef M_E
#undef M_LOG2E
#undef M_LOG10E
#undef M_LN2
#undef M_LN10
#undef M_PI
#undef M_PI_2
#undef M_PI_4
#undef M_1_PI
#undef M_2_PI
#undef M_2_SQRTPI
#undef M_SQRT2
#undef M_SQRT1_2

namespace ttsim::sfpu {

inline float as_float(uint32_t w) {
    float f;
    __builtin_memcpy(&f, &w, 4);
    return f;
}
inline uint32_t as_word(float f) {
    uint32_t w;
    __builtin_memcpy(&w, &f, 4);
    return w;
}

using FloatUnary = float (*)(float x, const uint32_t* params);
using FloatBinary = float (*)(float a, float b, const uint32_t* params);
using FloatTernary = float (*)(float a, float b, float c, const uint32_t* params);
using FloatQuaternary = float (*)(float a, float b, float c, float d, const uint32_t* params);
using WordUnary = uint32_t (*)(uint32_t x, const uint32_t* params);
using WordBinary = uint32_t (*)(uint32_t a, uint32_t b, const uint32_t* params);
using WordTernary = uint32_t (*)(uint32_t a, uint32_t b, uint32_t c, const uint32_t* params);

template <FloatUnary F>
uint32_t on_floats(const uint32_t* in, const uint32_t* p) { return as_word(F(as_float(in[0]), p)); }
template <FloatBinary F>
uint32_t on_floats2(const uint32_t* in, const uint32_t* p) { return as_word(F(as_float(in[0]), as_float(in[1]), p)); }
template <FloatTernary F>
uint32_t on_floats3(const uint32_t* in, const uint32_t* p) {
    return as_word(F(as_float(in[0]), as_float(in[1]), as_float(in[2]), p));
}
template <FloatQuaternary F>
uint32_t on_floats4(const uint32_t* in, const uint32_t* p) {
    return as_word(F(as_float(in[0]), as_float(in[1]), as_float(in[2]), as_float(in[3]), p));
}
template <WordUnary F>
uint32_t on_words(const uint32_t* in, const uint32_t* p) { return F(in[0], p); }
template <WordBinary F>
uint32_t on_words2(const uint32_t* in, const uint32_t* p) { return F(in[0], in[1], p); }
template <WordTernary F>
uint32_t on_words3(const uint32_t* in, const uint32_t* p) { return F(in[0], in[1], in[2], p); }

// A *_init: the SFPU is now set up for the calls that name `init_name`, keeping p0..p3 for them
// (their element functions see these as params[4..8)).
inline void setup(const char* init_name, uint32_t p0 = 0, uint32_t p1 = 0, uint32_t p2 = 0, uint32_t p3 = 0) {
    const uint32_t params[kSfpuMaxParams] = {p0, p1, p2, p3};
    TTSIM->sfpu_setup(init_name, params);
}

inline void run(const char* name, const char* init_name, SfpuElementFn fn, uint64_t tile_cycles, bool integer_result,
                const int* in, int n_in, uint32_t out, VectorMode mode, uint32_t p0, uint32_t p1, uint32_t p2,
                uint32_t p3, uint32_t broadcast = 0) {
    const SfpuElementwise op{name, init_name, fn, tile_cycles, integer_result, broadcast};
    const uint32_t params[kSfpuMaxParams] = {p0, p1, p2, p3};
    TTSIM->sfpu_eltwise(op, in, n_in, int(out), sfpu_faces(mode), params);
}

// DST[idst] = F(DST[idst]) on floats.
template <FloatUnary F>
inline void unary(const char* name, const char* init_name, uint64_t tile_cycles, uint32_t idst,
                  VectorMode mode = VectorMode::RC, uint32_t p0 = 0, uint32_t p1 = 0, uint32_t p2 = 0, uint32_t p3 = 0) {
    const int in[1] = {int(idst)};
    run(name, init_name, on_floats<F>, tile_cycles, false, in, 1, idst, mode, p0, p1, p2, p3);
}
// DST[odst] = F(DST[a], DST[b]) on floats.
template <FloatBinary F>
inline void binary(const char* name, const char* init_name, uint64_t tile_cycles, uint32_t a, uint32_t b, uint32_t odst,
                   VectorMode mode = VectorMode::RC, uint32_t p0 = 0, uint32_t p1 = 0) {
    const int in[2] = {int(a), int(b)};
    run(name, init_name, on_floats2<F>, tile_cycles, false, in, 2, odst, mode, p0, p1, 0, 0);
}
template <FloatTernary F>
inline void ternary(const char* name, const char* init_name, uint64_t tile_cycles, uint32_t a, uint32_t b, uint32_t c,
                    uint32_t odst, uint32_t p0 = 0) {
    const int in[3] = {int(a), int(b), int(c)};
    run(name, init_name, on_floats3<F>, tile_cycles, false, in, 3, odst, VectorMode::RC, p0, 0, 0, 0);
}
// Input `input` of a call broadcast as `how` (combine several with |).
constexpr uint32_t broadcast(int input, SfpuBroadcast how) { return uint32_t(how) << (2 * input); }

// Float functions of tiles some of which are broadcast (see SfpuElementwise::broadcast).
template <FloatBinary F>
inline void binary_broadcast(const char* name, const char* init_name, uint64_t tile_cycles, uint32_t a, uint32_t b,
                             uint32_t odst, uint32_t how) {
    const int in[2] = {int(a), int(b)};
    run(name, init_name, on_floats2<F>, tile_cycles, false, in, 2, odst, VectorMode::RC, 0, 0, 0, 0, how);
}
template <FloatTernary F>
inline void ternary_broadcast(const char* name, const char* init_name, uint64_t tile_cycles, uint32_t a, uint32_t b,
                              uint32_t c, uint32_t odst, uint32_t how) {
    const int in[3] = {int(a), int(b), int(c)};
    run(name, init_name, on_floats3<F>, tile_cycles, false, in, 3, odst, VectorMode::RC, 0, 0, 0, 0, how);
}
template <FloatQuaternary F>
inline void quaternary_broadcast(const char* name, const char* init_name, uint64_t tile_cycles, uint32_t a, uint32_t b,
                                 uint32_t c, uint32_t d, uint32_t odst, uint32_t how) {
    const int in[4] = {int(a), int(b), int(c), int(d)};
    run(name, init_name, on_floats4<F>, tile_cycles, false, in, 4, odst, VectorMode::RC, 0, 0, 0, 0, how);
}

// The same on raw words. `integer_result` false: the result word is an fp32 value (e.g. a conversion
// from an integer), rounded like any float result.
template <WordUnary F>
inline void unary_words(const char* name, const char* init_name, uint64_t tile_cycles, uint32_t idst,
                        bool integer_result = true, uint32_t p0 = 0, uint32_t p1 = 0, uint32_t p2 = 0) {
    const int in[1] = {int(idst)};
    run(name, init_name, on_words<F>, tile_cycles, integer_result, in, 1, idst, VectorMode::RC, p0, p1, p2, 0);
}
// DST[odst] = F(DST[idst]) on words, another tile as the output.
template <WordUnary F>
inline void unary_words_to(const char* name, const char* init_name, uint64_t tile_cycles, uint32_t idst, uint32_t odst,
                           bool integer_result) {
    const int in[1] = {int(idst)};
    run(name, init_name, on_words<F>, tile_cycles, integer_result, in, 1, odst, VectorMode::RC, 0, 0, 0, 0);
}
template <WordBinary F>
inline void binary_words(const char* name, const char* init_name, uint64_t tile_cycles, uint32_t a, uint32_t b,
                         uint32_t odst, bool integer_result = true, uint32_t p0 = 0) {
    const int in[2] = {int(a), int(b)};
    run(name, init_name, on_words2<F>, tile_cycles, integer_result, in, 2, odst, VectorMode::RC, p0, 0, 0, 0);
}
template <WordTernary F>
inline void ternary_words(const char* name, const char* init_name, uint64_t tile_cycles, uint32_t a, uint32_t b,
                          uint32_t c, uint32_t odst, bool integer_result = true, uint32_t p0 = 0) {
    const int in[3] = {int(a), int(b), int(c)};
    run(name, init_name, on_words3<F>, tile_cycles, integer_result, in, 3, odst, VectorMode::RC, p0, 0, 0, 0);
}

}  // namespace ttsim::sfpu

// An API function the simulator declares (so kernels compile) but does not model: stops the run.
#define TTSIM_NOT_MODELED(call, why) TTSIM->fail(call, "not modeled by the simulator: " why)
