// Tile indices of the constant tiles the chunk-preparation reader writes into its constants CB once
// and the compute kernel reads for the whole program (bf16, 0/1 entries).
#pragma once

#include <cstdint>

namespace gdn {

constexpr uint32_t kConstIdentity = 0;
constexpr uint32_t kConstStrictLower = 1;   // row > col
constexpr uint32_t kConstLowerIncl = 2;     // row >= col
constexpr uint32_t kConstLevelMask0 = 3;    // level l of the diagonal-tile inverse at kConstLevelMask0 + l
constexpr uint32_t kInverseLevels = 5;      // blocks of 1, 2, 4, 8, 16 rows merge up to 32
constexpr uint32_t kConstZero = kConstLevelMask0 + kInverseLevels;  // all zeros
constexpr uint32_t kNumConsts = kConstZero + 1;

}  // namespace gdn
