// Constants and small enums of tt-llk's ckernel_defs.h (Wormhole) that kernels name.
#pragma once

#include <cstdint>
#include <type_traits>

#include "llk_defs.h"
#include "tensix_types.h"

namespace ckernel {

enum ThreadId { BriscThreadId = 0, UnpackThreadId = 1, MathThreadId = 2, PackThreadId = 3 };
enum class DataLayout { TILE = 0, ROW_MAJOR = 1 };
enum DstTileShape { Tile32x32 = 0, Tile32x16 = 1, Tile16x16 = 2 };
enum class PackMode : std::uint8_t { Default = 0, Untilize = 1, Tilize = 2 };
// The SFPU API's rounding choices: of a division's quotient, and of an fp32 result stored to bf16 DST.
enum class RoundingMode : std::uint8_t { None = 0, Trunc = 1, Floor = 2 };
enum class DstRoundingMode : std::uint8_t { Default = 0, NearestEven = 1 };

constexpr std::uint32_t FACE_HEIGHT = 16;
constexpr std::uint32_t FACE_WIDTH = 16;
constexpr std::uint32_t TILE_HEIGHT = 32;
constexpr std::uint32_t TILE_WIDTH = 32;
constexpr std::uint32_t FACE_R_DIM = FACE_HEIGHT;
constexpr std::uint32_t FACE_C_DIM = FACE_WIDTH;
constexpr std::uint32_t TILE_R_DIM = TILE_HEIGHT;
constexpr std::uint32_t TILE_C_DIM = TILE_WIDTH;
constexpr std::uint32_t TILE_NUM_FACES = (TILE_R_DIM * TILE_C_DIM) / (FACE_R_DIM * FACE_C_DIM);
constexpr std::uint32_t FACE_SIZE = FACE_R_DIM * FACE_C_DIM;

template <typename T>
constexpr auto to_underlying(T t) noexcept {
    return static_cast<std::underlying_type_t<T>>(t);
}

}  // namespace ckernel
