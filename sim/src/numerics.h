// Numeric formats and matrix-unit arithmetic of a Wormhole B0 Tensix core, as the simulator models them.
//
// Two halves:
//  * Tile byte formats (Float32, Float16_b, Bfp8_b, Bfp4_b, Int32, UInt32): how a 32x32 tile is laid out in L1/DRAM and
//    how values are rounded when they are written in each format.
//  * The matrix unit (FPU): what srcA/srcB hold for an operand, and how math fidelity splits each
//    multiplication into 5-bit x 7-bit mantissa-slice phases.
// numerics.cpp explains each choice and cites where it comes from.
#pragma once

#include <cstdint>

namespace ttsim {

// tt::DataFormat numbering of the Wormhole headers (only the formats the simulator stores).
enum class DataFormat : uint8_t { Float32 = 0, Float16_b = 5, Bfp8_b = 6, Bfp4_b = 7, Int32 = 8, UInt32 = 24 };

// tt-metal's MathFidelity values; the number of multiplier phases is the value, LoFi being 1.
enum class MathFidelity : uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4 };

constexpr int TILE_DIM = 32, FACE_DIM = 16, TILE_ELEMS = 1024;
constexpr int FACE_ELEMS = FACE_DIM * FACE_DIM;                  // 256 values in one 16x16 face
constexpr int BFP8_EXPONENT_BYTES = TILE_ELEMS / FACE_DIM;       // 64: one shared exponent per face row

// Bytes of one 32x32 tile: 4096, 2048, 1088, 576, 4096. Throws std::invalid_argument for any other value.
uint32_t tile_bytes(DataFormat f);

// Round an fp32 value to bfloat16, round-to-nearest, ties to even (NaN stays a quiet NaN with its sign,
// infinities stay infinite, values past the largest bf16 become infinity, denormals round like any other).
float round_to_bf16(float x);
uint16_t bf16_bits(float x);        // the 16 bits of round_to_bf16(x)
float bf16_from_bits(uint16_t b);   // exact widening

// Index, in the hardware's face-ordered tile layout, of logical element (row, col) of a 32x32 tile.
// Faces: 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right; row-major inside a face.
constexpr int face_order_index(int row, int col) {
    return ((row / FACE_DIM) * 2 + (col / FACE_DIM)) * FACE_ELEMS + (row % FACE_DIM) * FACE_DIM + col % FACE_DIM;
}

// Tile bytes in the hardware's tile layout (face order). `values` is the logical 32x32 tile, row-major.
// pack_tile rounds as described in numerics.cpp; unpack_tile decodes exactly. For Int32 and UInt32
// the float array carries the raw 32-bit words (bit-cast; Int32 in two's complement), copied unchanged
// both ways, exactly like Float32.
void pack_tile(DataFormat f, const float* values, uint8_t* out);
void unpack_tile(DataFormat f, const uint8_t* in, float* values);

// The value srcA/srcB hold for an fp32 (or narrower) input: TF32, i.e. the low 13 mantissa bits
// dropped (truncation), denormals flushed to signed zero, infinities and NaN unchanged.
float to_fpu_operand(float x);

// Number of multiplier phases a fidelity runs (LoFi 1, HiFi2 2, HiFi3 3, HiFi4 4).
int fidelity_phases(MathFidelity fid);

// acc (32x32 row-major, fp32 Dst) += A (32x32 row-major) @ B (32x32 row-major), or A @ B^T when
// transpose_b, with the operands converted by to_fpu_operand and multiplied phase by phase the way
// MVMUL does at the given fidelity (see numerics.cpp).
void matmul_tile_acc(const float* A, const float* B, float* acc, MathFidelity fid, bool transpose_b);

}  // namespace ttsim
