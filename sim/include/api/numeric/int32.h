// int32 extremes and comparison (api/numeric/int32.h).
#pragma once

#include <stdint.h>

inline constexpr int32_t NEG_INF_INT32 = INT32_MIN;
inline constexpr int32_t POS_INF_INT32 = INT32_MAX;
inline constexpr uint32_t INT32_SIGN_MASK = 0x80000000;

inline bool int32_greater(int32_t int32_a, int32_t int32_b) { return int32_a > int32_b; }
