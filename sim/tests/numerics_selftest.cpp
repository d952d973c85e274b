// Standalone check and benchmark of sim/src/numerics.cpp (not part of CI; the pytest suite covers the
// same code through the Python extension). Build and run by hand from the repo root:
//   g++ -std=c++17 -O3 -march=x86-64-v2 -Isim/src sim/src/numerics.cpp sim/tests/numerics_selftest.cpp
//     -o /tmp/numerics_selftest && /tmp/numerics_selftest
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "numerics.h"

using namespace ttsim;

static int failures = 0;

static void check(bool ok, const char* what) {
    if (!ok) {
        std::printf("FAIL: %s\n", what);
        ++failures;
    }
}

static float from_bits(uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}

// One-element-is-x, rest-zero tiles make the fidelity slices visible: out[0][0] = a * b.
static float single_product(float a, float b, MathFidelity fid) {
    std::vector<float> A(TILE_ELEMS, 0.0f), B(TILE_ELEMS, 0.0f), acc(TILE_ELEMS, 0.0f);
    A[0] = a;
    B[0] = b;
    matmul_tile_acc(A.data(), B.data(), acc.data(), fid, false);
    return acc[0];
}

int main() {
    // Tile sizes.
    check(tile_bytes(DataFormat::Float32) == 4096 && tile_bytes(DataFormat::Float16_b) == 2048 &&
              tile_bytes(DataFormat::Bfp8_b) == 1088 && tile_bytes(DataFormat::UInt32) == 4096,
          "tile_bytes");

    // bf16 rounding: ties to even, carry into the exponent, overflow, NaN.
    check(bf16_bits(1.0f) == 0x3f80, "bf16(1.0)");
    check(bf16_bits(from_bits(0x3f808000)) == 0x3f80, "tie rounds down to even");
    check(bf16_bits(from_bits(0x3f818000)) == 0x3f82, "tie rounds up to even");
    check(bf16_bits(from_bits(0x3fffffff)) == 0x4000, "carry into exponent");
    check(std::isinf(round_to_bf16(3.4028235e38f)), "max float rounds to inf");
    check(std::isnan(round_to_bf16(from_bits(0x7f800001))), "signalling NaN stays NaN");

    // Face order: logical (0,16) is the first value of face 1, (16,0) of face 2.
    check(face_order_index(0, 16) == 256 && face_order_index(16, 0) == 512 && face_order_index(31, 31) == 1023,
          "face_order_index");

    // Bfp8_b: row 0 of face 0 holds 1.0 and 0.5; the shared exponent is 127, magnitudes 64 and 32.
    {
        std::vector<float> t(TILE_ELEMS, 0.0f), back(TILE_ELEMS);
        std::vector<uint8_t> bytes(1088);
        t[0] = 1.0f;
        t[1] = -0.5f;
        t[2] = 1.0f / 256;  // 2^-8 below the row maximum: rounds to nothing
        t[16] = 3.0f;       // logical (0,16): face 1 row 0 -> exponent byte 16
        pack_tile(DataFormat::Bfp8_b, t.data(), bytes.data());
        check(bytes[0] == 127 && bytes[16] == 128, "bfp8 shared exponents");
        check(bytes[64] == 64 && bytes[65] == (0x80 | 32) && bytes[66] == 0, "bfp8 magnitudes");
        check(bytes[64 + 256] == 96, "bfp8 face 1 value");
        unpack_tile(DataFormat::Bfp8_b, bytes.data(), back.data());
        check(back[0] == 1.0f && back[1] == -0.5f && back[2] == 0.0f && back[16] == 3.0f, "bfp8 decode");
    }

    // Fidelity slices, bf16 operands. A (SrcB) keeps 7 significant bits in its hi slice, B (SrcA) 5.
    {
        const float one_plus_lsb = 1.0f + 1.0f / 128;  // bf16 with only the last mantissa bit set
        check(single_product(one_plus_lsb, 1.0f, MathFidelity::HiFi2) == 1.0f, "A's last bit missing at HiFi2");
        check(single_product(one_plus_lsb, 1.0f, MathFidelity::HiFi3) == one_plus_lsb, "A's last bit at HiFi3");
        check(single_product(1.0f, one_plus_lsb, MathFidelity::LoFi) == 1.0f, "B's low bits missing at LoFi");
        check(single_product(1.0f, one_plus_lsb, MathFidelity::HiFi2) == one_plus_lsb, "B's low bits at HiFi2");
        check(single_product(one_plus_lsb, one_plus_lsb, MathFidelity::HiFi3) == one_plus_lsb * one_plus_lsb - 1.0f / 16384,
              "HiFi3 misses A_lo*B_lo");
        check(single_product(one_plus_lsb, one_plus_lsb, MathFidelity::HiFi4) == one_plus_lsb * one_plus_lsb,
              "HiFi4 exact for bf16");
        check(to_fpu_operand(from_bits(0x3f801fff)) == 1.0f, "TF32 truncation");
    }

    // Speed: HiFi4 tile matmuls per second on one core.
    {
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::vector<float> A(TILE_ELEMS), B(TILE_ELEMS), acc(TILE_ELEMS, 0.0f);
        for (auto& v : A) v = round_to_bf16(dist(rng));
        for (auto& v : B) v = round_to_bf16(dist(rng));
        for (MathFidelity fid : {MathFidelity::LoFi, MathFidelity::HiFi2, MathFidelity::HiFi4}) {
            const int n = 100000;
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < n; ++i) matmul_tile_acc(A.data(), B.data(), acc.data(), fid, (i & 1) != 0);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::printf("matmul_tile_acc fidelity %d: %.0f tiles/s (checksum %g)\n", int(fid), n / s, double(acc[5]));
        }
        std::vector<uint8_t> bytes(1088);
        const int n = 200000;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) {
            pack_tile(DataFormat::Bfp8_b, A.data(), bytes.data());
            unpack_tile(DataFormat::Bfp8_b, bytes.data(), acc.data());
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("bfp8 pack+unpack: %.0f tiles/s\n", n / s);
    }

    std::printf(failures ? "%d FAILURES\n" : "all checks passed\n", failures);
    return failures ? 1 : 0;
}
