// bfloat16 bit patterns and conversions for kernels that build or compare values in L1
// (api/numeric/bfloat16.h).
#pragma once

#include <stdint.h>

#include <cstring>

#include "internal/risc_attribs.h"

inline constexpr uint16_t NEG_INF_BFLOAT16 = 0xFF80;
inline constexpr uint16_t POS_INF_BFLOAT16 = 0x7F80;
inline constexpr uint16_t NAN_BFLOAT16 = 0x7FFF;
inline constexpr uint16_t BFLOAT16_SIGN_MASK = 0x8000;
inline constexpr uint16_t BFLOAT16_EXPONENT_MASK = 0x7F80;
inline constexpr uint16_t BFLOAT16_MANTISSA_MASK = 0x007F;
inline constexpr uint16_t BFLOAT16_MAGNITUDE_MASK = 0x7FFF;

FORCE_INLINE float bf16_to_fp32(std::uint16_t bf16) {
    const std::uint32_t bits = std::uint32_t(bf16) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// Round to nearest, ties to even.
FORCE_INLINE std::uint16_t fp32_to_bf16(float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return std::uint16_t(bits >> 16);
}

FORCE_INLINE std::uint16_t fp32_to_bf16_truncate(float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return std::uint16_t(bits >> 16);
}

// The two halves of a float's bit pattern.
struct FloatBits {
    std::uint16_t high16;
    std::uint16_t low16;
    explicit FloatBits(float value) {
        std::uint32_t bits;
        std::memcpy(&bits, &value, sizeof bits);
        high16 = std::uint16_t(bits >> 16);
        low16 = std::uint16_t(bits);
    }
};

// a > b on bit patterns, sign-magnitude order (so +0 > -0; NaNs compare by their bits).
inline bool bfloat16_greater(uint16_t bf16_a, uint16_t bf16_b) {
    const bool a_negative = bf16_a & BFLOAT16_SIGN_MASK, b_negative = bf16_b & BFLOAT16_SIGN_MASK;
    if (a_negative != b_negative) return !a_negative;
    return a_negative ? bf16_a < bf16_b : bf16_a > bf16_b;
}
