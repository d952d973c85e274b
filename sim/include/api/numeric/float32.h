// float32 bit patterns and comparison on them (api/numeric/float32.h).
#pragma once

#include <stdint.h>

inline constexpr uint32_t NEG_INF_FLOAT32 = 0xFF800000;
inline constexpr uint32_t POS_INF_FLOAT32 = 0x7F800000;
inline constexpr uint32_t NAN_FLOAT32 = 0x7FFFFFFF;
inline constexpr uint32_t FLOAT32_SIGN_MASK = 0x80000000;
inline constexpr uint32_t FLOAT32_EXPONENT_MASK = 0x7F800000;
inline constexpr uint32_t FLOAT32_MANTISSA_MASK = 0x007FFFFF;
inline constexpr uint32_t FLOAT32_MAGNITUDE_MASK = 0x7FFFFFFF;

// a > b for the floats these bit patterns encode: false when either is NaN, and +0 == -0.
inline bool float32_greater(uint32_t f32_a, uint32_t f32_b) {
    auto is_nan = [](uint32_t f) {
        return (f & FLOAT32_EXPONENT_MASK) == FLOAT32_EXPONENT_MASK && (f & FLOAT32_MANTISSA_MASK) != 0;
    };
    if (is_nan(f32_a) || is_nan(f32_b)) return false;
    if ((f32_a & FLOAT32_MAGNITUDE_MASK) == 0 && (f32_b & FLOAT32_MAGNITUDE_MASK) == 0) return false;
    const bool a_negative = f32_a & FLOAT32_SIGN_MASK, b_negative = f32_b & FLOAT32_SIGN_MASK;
    if (a_negative != b_negative) return !a_negative;
    return a_negative ? f32_a < f32_b : f32_a > f32_b;
}
