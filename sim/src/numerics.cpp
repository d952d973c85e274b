// Numeric formats and matrix-unit arithmetic of the simulator. Sources and choices:
//
// TILE LAYOUT. A 32x32 tile is stored as four 16x16 faces (0 top-left, 1 top-right, 2 bottom-left,
// 3 bottom-right), each row-major (WORMHOLE.md; tt-metal tilize_utils / blockfloat_common).
//
// FLOAT16_B (bfloat16). 2 bytes per value, little-endian, face order. fp32 -> bf16 rounds to nearest,
// ties to even, as torch and tt-metal's host conversion do. NaN stays NaN, inf stays inf, denormals keep
// their bf16 rounding. Simplification: the ISA documentation's packer (Packers/FormatConversion.md, early
// conversion) rounds ties *away from zero*, flushes denormals and -0 to +0 and turns NaN into infinity.
// The simulator uses one rounding everywhere (ties to even, matching the host side and torch), so an
// exact tie can round one bf16 ulp differently from silicon.
//
// BFP8_B. 1088 bytes per tile: first 64 shared-exponent bytes, then 1024 one-byte values.
//  * Exponent byte i (0..63) belongs to the 16 values of face i/16, face row i%16: the exponents of
//    face 0 rows 0..15, then face 1, 2, 3. Value bytes follow in face order (tt-metal
//    blockfloat_common.cpp, "prepend exponents" comment in pack_fp32_vec_as_bfp_tiles, and the
//    exponent index of hw/inc/api/debug/dprint_tile.h).
//  * The shared exponent is the largest biased fp32 exponent field of the 16 values.
//  * A value byte is sign(1) | magnitude(7); the magnitude has no hidden bit:
//        value = (-1)^sign * magnitude * 2^(shared_exp - 127 - 6).
//  * Encoding one value (tt-metal host packer, bfp_simd.hpp row_scalar / blockfloat_common.cpp
//    convert_u32_to_bfp): exponent-field-0 inputs (zeros, denormals) become 0; otherwise the 24-bit
//    significand (hidden 1 included) is shifted right by (shared_exp - exp), dropping the shifted-out
//    bits, and then rounded to its top 7 bits at bit 17, ties to even, judged on the bits that remain
//    after the shift; a magnitude that rounds up to 128 saturates to 127; a zero magnitude gets no sign.
//    So within a row the largest value keeps 6 fraction bits and a value 2^k smaller keeps 6-k; values
//    smaller than the largest by 2^8 or more vanish.
//  * Simplifications: the device packer (Packers/FormatConversion.md) first truncates to bf16 and rounds
//    ties away from zero; we use the host rule above for every packing so host and device bytes agree.
//    Newer tt-metal hosts can optionally pick max_exp - 1 when that lowers a row's squared error
//    (bfp_exponent_search.hpp); not modelled, the shared exponent is always the row maximum.
//  * Decoding is exact. A shared exponent of 255 (a row holding inf/NaN) decodes magnitude 64 as inf and
//    larger magnitudes as NaN, like re-assembling the fp32 bit pattern would.
//
// FLOAT32 and UINT32 are 4 bytes per value, little-endian, face order, copied bit for bit.
//
// MATRIX UNIT (tt-isa-documentation WormholeB0 MatrixUnit.md, MVMUL.md, SrcASrcB.md):
//  * MVMUL computes Dst += SrcB @ SrcA, and tt-metal's matmul unpacks in0 (our A) to SrcB and in1
//    (our B) to SrcA (tt_metal/hw/inc/api/compute/matmul.h).
//  * Operands: the unpacker turns fp32 into TF32 by dropping the low 13 mantissa bits; MVMUL flushes
//    denormals to zero (to_fpu_operand). bf16 and bfp8 inputs are already exact in TF32.
//  * Per phase the multiplier takes a slice of each operand (SrcAFidelityBits / SrcBFidelityBits):
//      SrcA (B): hi = sign, exponent, hidden 1 and the top 4 mantissa bits (mask 0xfff80000);
//                lo = the next 5 mantissa bits (bits 18..14; TF32's last bit, bit 13, is never used).
//      SrcB (A): hi = sign, exponent, hidden 1 and the top 6 mantissa bits (mask 0xfffe0000);
//                lo = the next 4 mantissa bits (bits 16..13).
//    Phase p uses SrcA lo when p&1, SrcB lo when p&2:
//      phase 0: A_hi*B_hi, phase 1: A_hi*B_lo, phase 2: A_lo*B_hi, phase 3: A_lo*B_lo.
//    A fidelity with N phases runs phases 0..N-1 (LoFi 1, HiFi2 2, HiFi3 3, HiFi4 4). For bf16 inputs
//    HiFi4 covers every bit, so each product is exact; HiFi3 misses A_lo*B_lo, HiFi2 also A_lo*B_hi,
//    LoFi also A_hi*B_lo.
//  * Each slice product has at most 7 x 5 significant bits, so it is exact in fp32 (with or without
//    FMA contraction). Order of additions, following MVMUL's functional model and tt-llk's matmul MOP
//    (llk_math_matmul.h: the whole tile's MVMULs run once per fidelity phase; for each output face the
//    k = 0..15 half comes before k = 16..31): for phase in 0..N-1, for k-half in 0,1: a 16-term fp32 sum
//    from zero in k order, then added to the fp32 Dst value. The ISA doc calls its float model a rough
//    guide; this order is our model of it.
//  * Non-finite operands (inf/NaN) are used whole in the hi slice with a zero lo slice, so they
//    propagate as in IEEE arithmetic (silicon's inf/NaN handling differs and is not modelled).
//  * Only fp32 Dst is modelled here; with a bf16 Dst the caller rounds the result itself.
#include "numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace ttsim {
namespace {

inline uint32_t float_bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

inline float float_from_bits(uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

inline void store_le32(uint8_t* p, uint32_t v) {
    p[0] = uint8_t(v);
    p[1] = uint8_t(v >> 8);
    p[2] = uint8_t(v >> 16);
    p[3] = uint8_t(v >> 24);
}

inline uint32_t load_le32(const uint8_t* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// Row-major logical tile -> face-ordered copy of its 32-bit patterns, and back.
void gather_face_order(const float* values, uint32_t* face_ordered) {
    for (int r = 0; r < TILE_DIM; ++r)
        for (int c = 0; c < TILE_DIM; ++c) face_ordered[face_order_index(r, c)] = float_bits(values[r * TILE_DIM + c]);
}

void scatter_face_order(const uint32_t* face_ordered, float* values) {
    for (int r = 0; r < TILE_DIM; ++r)
        for (int c = 0; c < TILE_DIM; ++c) values[r * TILE_DIM + c] = float_from_bits(face_ordered[face_order_index(r, c)]);
}

// --- Bfp8_b ---------------------------------------------------------------------------------------

constexpr int BFP8_MAGNITUDE_BITS = 7;
constexpr uint32_t BFP8_MAGNITUDE_MAX = (1u << BFP8_MAGNITUDE_BITS) - 1;   // 127
constexpr int BFP8_DROP_BITS = 24 - BFP8_MAGNITUDE_BITS;                   // 17 of the 24-bit significand

inline uint32_t exponent_field(uint32_t bits) { return (bits >> 23) & 0xffu; }

// Encode 16 fp32 bit patterns that share one exponent; writes 16 value bytes, returns the exponent.
uint8_t encode_bfp8_row(const uint32_t* row, uint8_t* codes) {
    uint32_t shared = 0;
    for (int j = 0; j < FACE_DIM; ++j) shared = std::max(shared, exponent_field(row[j]));
    for (int j = 0; j < FACE_DIM; ++j) {
        const uint32_t exp = exponent_field(row[j]);
        if (exp == 0) {  // zero or denormal: flushed
            codes[j] = 0;
            continue;
        }
        const uint32_t shift = shared - exp;
        uint32_t significand = (row[j] & 0x7fffffu) | 0x800000u;
        significand = shift >= 32 ? 0 : significand >> shift;
        const uint32_t odd = (significand >> BFP8_DROP_BITS) & 1u;
        uint32_t magnitude = (significand + ((1u << (BFP8_DROP_BITS - 1)) - 1) + odd) >> BFP8_DROP_BITS;
        if (magnitude > BFP8_MAGNITUDE_MAX) magnitude = BFP8_MAGNITUDE_MAX;
        const uint32_t sign = row[j] >> 31;
        codes[j] = magnitude == 0 ? 0 : uint8_t(sign << BFP8_MAGNITUDE_BITS | magnitude);
    }
    return uint8_t(shared);
}

inline float decode_bfp8(uint8_t code, uint8_t shared_exp) {
    const uint32_t magnitude = code & BFP8_MAGNITUDE_MAX;
    const float sign = (code >> BFP8_MAGNITUDE_BITS) ? -1.0f : 1.0f;
    if (shared_exp == 0xff && magnitude >= 64)
        return magnitude == 64 ? sign * std::numeric_limits<float>::infinity()
                               : std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
    // 2^(shared_exp - 133) is a normal or denormal float for every shared_exp in 0..255 and the product
    // with a 7-bit magnitude is exact.
    return sign * float(magnitude) * std::ldexp(1.0f, int(shared_exp) - 127 - (BFP8_MAGNITUDE_BITS - 1));
}

// --- Bfp4_b ---------------------------------------------------------------------------------------
// The same shared exponent per 16 values of a face row as Bfp8_b, but each value keeps a sign and a 3-bit
// magnitude (no hidden bit), two values to a byte: value 2k in the low nibble of byte k, 2k+1 in the high
// one (the nibble order sdpa's mask writer uses, eight values to a little-endian word). A tile is the 64
// exponent bytes, then 512 bytes of value nibbles in face order.

constexpr int BFP4_MAGNITUDE_BITS = 3;
constexpr uint32_t BFP4_MAGNITUDE_MAX = (1u << BFP4_MAGNITUDE_BITS) - 1;   // 7
constexpr int BFP4_DROP_BITS = 24 - BFP4_MAGNITUDE_BITS;                   // 21 of the 24-bit significand

// Encode 16 fp32 bit patterns that share one exponent into 8 bytes of nibbles; returns the exponent.
// Rounding as Bfp8_b's: nearest, ties to even, saturating; zeros and denormals flush, zero never signed.
uint8_t encode_bfp4_row(const uint32_t* row, uint8_t* bytes) {
    uint32_t shared = 0;
    for (int j = 0; j < FACE_DIM; ++j) shared = std::max(shared, exponent_field(row[j]));
    for (int j = 0; j < FACE_DIM; j += 2) bytes[j / 2] = 0;
    for (int j = 0; j < FACE_DIM; ++j) {
        const uint32_t exp = exponent_field(row[j]);
        if (exp == 0) continue;
        const uint32_t shift = shared - exp;
        uint32_t significand = (row[j] & 0x7fffffu) | 0x800000u;
        significand = shift >= 32 ? 0 : significand >> shift;
        const uint32_t odd = (significand >> BFP4_DROP_BITS) & 1u;
        uint32_t magnitude = (significand + ((1u << (BFP4_DROP_BITS - 1)) - 1) + odd) >> BFP4_DROP_BITS;
        if (magnitude > BFP4_MAGNITUDE_MAX) magnitude = BFP4_MAGNITUDE_MAX;
        const uint32_t nibble = magnitude == 0 ? 0 : ((row[j] >> 31) << BFP4_MAGNITUDE_BITS | magnitude);
        bytes[j / 2] |= uint8_t(nibble << (4 * (j % 2)));
    }
    return uint8_t(shared);
}

// Magnitude 4 (the hidden bit alone) under exponent 255 is infinity, 5..7 NaN, as for Bfp8_b's 64.
inline float decode_bfp4(uint8_t nibble, uint8_t shared_exp) {
    const uint32_t magnitude = nibble & BFP4_MAGNITUDE_MAX;
    const float sign = (nibble >> BFP4_MAGNITUDE_BITS) & 1u ? -1.0f : 1.0f;
    if (shared_exp == 0xff && magnitude >= 4)
        return magnitude == 4 ? sign * std::numeric_limits<float>::infinity()
                              : std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
    return sign * float(magnitude) * std::ldexp(1.0f, int(shared_exp) - 127 - (BFP4_MAGNITUDE_BITS - 1));
}

// --- Matrix unit ----------------------------------------------------------------------------------

constexpr uint32_t SRCA_HI_MASK = 0xfff80000u;    // sign, exponent, hidden 1, top 4 mantissa bits
constexpr uint32_t SRCA_LO_CLEAR = 0xfff83fffu;   // everything except mantissa bits 18..14
constexpr uint32_t SRCB_HI_MASK = 0xfffe0000u;    // sign, exponent, hidden 1, top 6 mantissa bits
constexpr uint32_t SRCB_LO_CLEAR = 0xfffe1fffu;   // everything except mantissa bits 16..13

// gcc/clang vector types of 4 lanes: plain SSE on any x86-64, so the hot loops vectorise at -O2 and
// -O3 whatever -march is. Casting between same-size vector types reinterprets the bits.
typedef float f32x4 __attribute__((vector_size(16)));
typedef uint32_t u32x4 __attribute__((vector_size(16)));

inline f32x4 load4(const float* p) {
    f32x4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline void store4(float* p, f32x4 v) { std::memcpy(p, &v, sizeof v); }

inline u32x4 select_bits(u32x4 mask, u32x4 if_set, u32x4 if_clear) { return (if_set & mask) | (if_clear & ~mask); }

// Split 4 operands into the two slices one source register feeds the multiplier, after the unpacker's
// TF32 conversion (the same rule as to_fpu_operand). lo = t - (t with the lo bits cleared), which is
// exactly those bits' value with t's sign.
inline void split_operands4(const float* x, uint32_t hi_mask, uint32_t lo_clear, float* hi, float* lo) {
    const u32x4 u = (u32x4)load4(x);
    const u32x4 exp_bits = u & 0x7f800000u;
    const u32x4 special = (u32x4)(exp_bits == 0x7f800000u);  // inf / NaN: kept whole in hi
    const u32x4 tiny = (u32x4)(exp_bits == 0u);              // zero / denormal: signed zero
    const u32x4 t = select_bits(special, u, select_bits(tiny, u & 0x80000000u, u & 0xffffe000u));
    store4(hi, (f32x4)select_bits(special, t, t & hi_mask));
    const f32x4 lo_value = (f32x4)t - (f32x4)(t & lo_clear);
    store4(lo, (f32x4)select_bits(special, u32x4{}, (u32x4)lo_value));
}

// acc += a @ b for 32x32 row-major tiles, summing each k-half of 16 products from zero in fp32 before
// adding it to acc (one MVMUL's worth). A block of 2 rows x 16 columns keeps 8 partial-sum
// vectors, 4 b vectors and 2 broadcast a values in the 16 SSE registers. Every lane does the same fp32
// operations in the same order as the scalar loop would, so the result does not depend on the build.
void phase_matmul(const float* __restrict a, const float* __restrict b, float* __restrict acc) {
    constexpr int ROWS = 2, COLS = 16, VECS = COLS / 4;
    for (int i = 0; i < TILE_DIM; i += ROWS) {
        for (int j0 = 0; j0 < TILE_DIM; j0 += COLS) {
            for (int half = 0; half < 2; ++half) {
                f32x4 partial[ROWS][VECS] = {};
                for (int kk = 0; kk < FACE_DIM; ++kk) {
                    const int k = half * FACE_DIM + kk;
                    f32x4 b_vec[VECS];
#pragma GCC unroll 4
                    for (int v = 0; v < VECS; ++v) b_vec[v] = load4(b + k * TILE_DIM + j0 + 4 * v);
#pragma GCC unroll 2
                    for (int r = 0; r < ROWS; ++r) {
                        const float x = a[(i + r) * TILE_DIM + k];
                        const f32x4 a_vec = {x, x, x, x};
#pragma GCC unroll 4
                        for (int v = 0; v < VECS; ++v) partial[r][v] += a_vec * b_vec[v];
                    }
                }
#pragma GCC unroll 2
                for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 4
                    for (int v = 0; v < VECS; ++v) {
                        float* p = acc + (i + r) * TILE_DIM + j0 + 4 * v;
                        store4(p, load4(p) + partial[r][v]);
                    }
            }
        }
    }
}

}  // namespace

uint32_t tile_bytes(DataFormat f) {
    switch (f) {
        case DataFormat::Float32: return 4096;
        case DataFormat::Float16_b: return 2048;
        case DataFormat::Bfp8_b: return 1088;
        case DataFormat::Bfp4_b: return BFP8_EXPONENT_BYTES + TILE_ELEMS / 2;  // 576
        case DataFormat::Int32:
        case DataFormat::UInt32: return 4096;
    }
    throw std::invalid_argument("tile_bytes: unsupported DataFormat value " + std::to_string(int(f)) +
                                "; the simulator stores Float32 (0), Float16_b (5), Bfp8_b (6), Bfp4_b (7), Int32 (8) "
                                "and UInt32 (24)");
}

uint16_t bf16_bits(float x) {
    const uint32_t u = float_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)  // NaN: keep sign and top payload, force the quiet bit so it
        return uint16_t((u >> 16) | 0x0040u);  // cannot truncate to infinity
    const uint32_t lsb = (u >> 16) & 1u;  // ties go to the even bf16 neighbour
    return uint16_t((u + 0x7fffu + lsb) >> 16);
}

float bf16_from_bits(uint16_t b) { return float_from_bits(uint32_t(b) << 16); }

float round_to_bf16(float x) { return bf16_from_bits(bf16_bits(x)); }

void pack_tile(DataFormat f, const float* values, uint8_t* out) {
    uint32_t face_ordered[TILE_ELEMS];
    gather_face_order(values, face_ordered);
    switch (f) {
        case DataFormat::Float32:
        case DataFormat::Int32:
        case DataFormat::UInt32:
            for (int i = 0; i < TILE_ELEMS; ++i) store_le32(out + 4 * i, face_ordered[i]);
            return;
        case DataFormat::Float16_b:
            for (int i = 0; i < TILE_ELEMS; ++i) {
                const uint16_t b = bf16_bits(float_from_bits(face_ordered[i]));
                out[2 * i] = uint8_t(b);
                out[2 * i + 1] = uint8_t(b >> 8);
            }
            return;
        case DataFormat::Bfp8_b:
            for (int row = 0; row < BFP8_EXPONENT_BYTES; ++row)
                out[row] = encode_bfp8_row(face_ordered + row * FACE_DIM, out + BFP8_EXPONENT_BYTES + row * FACE_DIM);
            return;
        case DataFormat::Bfp4_b:
            for (int row = 0; row < BFP8_EXPONENT_BYTES; ++row)
                out[row] = encode_bfp4_row(face_ordered + row * FACE_DIM, out + BFP8_EXPONENT_BYTES + row * FACE_DIM / 2);
            return;
    }
    tile_bytes(f);  // throws the unsupported-format error
}

void unpack_tile(DataFormat f, const uint8_t* in, float* values) {
    uint32_t face_ordered[TILE_ELEMS];
    switch (f) {
        case DataFormat::Float32:
        case DataFormat::Int32:
        case DataFormat::UInt32:
            for (int i = 0; i < TILE_ELEMS; ++i) face_ordered[i] = load_le32(in + 4 * i);
            break;
        case DataFormat::Float16_b:
            for (int i = 0; i < TILE_ELEMS; ++i) face_ordered[i] = (uint32_t(in[2 * i]) | uint32_t(in[2 * i + 1]) << 8) << 16;
            break;
        case DataFormat::Bfp8_b:
            for (int i = 0; i < TILE_ELEMS; ++i)
                face_ordered[i] = float_bits(decode_bfp8(in[BFP8_EXPONENT_BYTES + i], in[i / FACE_DIM]));
            break;
        case DataFormat::Bfp4_b:
            for (int i = 0; i < TILE_ELEMS; ++i)
                face_ordered[i] = float_bits(decode_bfp4(uint8_t(in[BFP8_EXPONENT_BYTES + i / 2] >> (4 * (i % 2))),
                                                         in[i / FACE_DIM]));
            break;
        default:
            tile_bytes(f);  // throws the unsupported-format error
    }
    scatter_face_order(face_ordered, values);
}

float to_fpu_operand(float x) {
    const uint32_t u = float_bits(x);
    const uint32_t exp = exponent_field(u);
    if (exp == 0xff) return x;                               // inf / NaN kept
    if (exp == 0) return float_from_bits(u & 0x80000000u);   // zero / denormal -> signed zero
    return float_from_bits(u & 0xffffe000u);                 // TF32: 10 mantissa bits kept
}

int fidelity_phases(MathFidelity fid) {
    switch (fid) {
        case MathFidelity::LoFi: return 1;
        case MathFidelity::HiFi2: return 2;
        case MathFidelity::HiFi3: return 3;
        case MathFidelity::HiFi4: return 4;
    }
    throw std::invalid_argument("unsupported MathFidelity value " + std::to_string(int(fid)) +
                                "; use LoFi (0), HiFi2 (2), HiFi3 (3) or HiFi4 (4)");
}

void matmul_tile_acc(const float* A, const float* B, float* acc, MathFidelity fid, bool transpose_b) {
    const int phases = fidelity_phases(fid);
    // Slices, computed once per tile. A feeds SrcB, B feeds SrcA.
    alignas(64) float a_hi[TILE_ELEMS], a_lo[TILE_ELEMS], b_hi[TILE_ELEMS], b_lo[TILE_ELEMS];
    for (int i = 0; i < TILE_ELEMS; i += 4) split_operands4(A + i, SRCB_HI_MASK, SRCB_LO_CLEAR, a_hi + i, a_lo + i);
    alignas(64) float b_t[TILE_ELEMS];
    if (transpose_b)
        for (int k = 0; k < TILE_DIM; ++k)
            for (int j = 0; j < TILE_DIM; ++j) b_t[k * TILE_DIM + j] = B[j * TILE_DIM + k];
    const float* b_src = transpose_b ? b_t : B;
    for (int i = 0; i < TILE_ELEMS; i += 4) split_operands4(b_src + i, SRCA_HI_MASK, SRCA_LO_CLEAR, b_hi + i, b_lo + i);
    for (int phase = 0; phase < phases; ++phase) {
        const float* a = (phase & 2) ? a_lo : a_hi;
        const float* b = (phase & 1) ? b_lo : b_hi;
        phase_matmul(a, b, acc);
    }
}

}  // namespace ttsim
