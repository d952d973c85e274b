// The per-kernel descriptors tt-metal's JIT generates for a compute kernel (its chlkc_*.h files): each
// CB's data format as the unpacker reads it from L1 (unpack_src_format), as it lands in srcA/srcB
// (unpack_dst_format), as the packer reads it from DST (pack_src_format) and writes it to L1
// (pack_dst_format), and each CB's tile shape. The simulator's JIT passes the program's CB formats in
// as -DTTSIM_CB_FORMATS=f0,...,f31 (255 where a kernel's cores have no such CB); the derived formats
// follow tt-metal's JIT rules for the formats the simulator stores (Float32, Float16_b, Bfp8_b, Bfp4_b, UInt32)
// without unpack-to-dest overrides. Every CB holds 32x32 tiles of four 16x16 faces.
#pragma once

#include <array>
#include <cstdint>

#include "ttsim/common.h"

namespace ttsim::jit {

constexpr uint8_t kNoCb = 0xff;
#ifdef TTSIM_CB_FORMATS
constexpr std::array<uint8_t, 32> kCbFormats = {TTSIM_CB_FORMATS};
#else
constexpr std::array<uint8_t, 32> kCbFormats = {kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb,
                                                kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb,
                                                kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb,
                                                kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb, kNoCb};
#endif
constexpr bool kFp32Dest = DST_ACCUM_MODE;

constexpr uint8_t fmt(DataFormat f) { return static_cast<uint8_t>(f); }
// Float32 reaches srcA/srcB as TF32 with fp32 DST, as bf16 otherwise; the other formats unchanged.
constexpr uint8_t unpack_dst(uint8_t f) {
    return f == fmt(DataFormat::Float32) ? (kFp32Dest ? fmt(DataFormat::Tf32) : fmt(DataFormat::Float16_b)) : f;
}
// DST holds fp32 (fp32 DST) or bf16 values; the packer reads them in that format, integers unchanged.
constexpr uint8_t pack_src(uint8_t f) {
    if (f == kNoCb || f == fmt(DataFormat::UInt32) || f == fmt(DataFormat::Int32)) return f;
    return kFp32Dest && f == fmt(DataFormat::Float32) ? fmt(DataFormat::Float32) : fmt(DataFormat::Float16_b);
}
constexpr uint16_t tile_size(uint8_t f) {
    return f == fmt(DataFormat::Float32) || f == fmt(DataFormat::UInt32) || f == fmt(DataFormat::Int32) ? 4096
           : f == fmt(DataFormat::Float16_b)                                                          ? 2048
           : f == fmt(DataFormat::Bfp8_b)                                                             ? 1088
           : f == fmt(DataFormat::Bfp4_b)                                                             ? 576
                                                                                                      : 0;
}
template <typename T, typename F>
constexpr std::array<T, 32> per_cb(F f) {
    std::array<T, 32> out{};
    for (int i = 0; i < 32; ++i) out[i] = static_cast<T>(f(kCbFormats[i]));
    return out;
}
template <typename T>
constexpr std::array<T, 32> all_cbs(T value) {
    std::array<T, 32> out{};
    for (auto& v : out) v = value;
    return out;
}

}  // namespace ttsim::jit

constexpr auto unpack_src_format = ttsim::jit::per_cb<std::int32_t>([](uint8_t f) { return f; });
constexpr auto unpack_dst_format = ttsim::jit::per_cb<std::int32_t>([](uint8_t f) { return ttsim::jit::unpack_dst(f); });
constexpr auto pack_src_format = ttsim::jit::per_cb<unsigned char>([](uint8_t f) { return ttsim::jit::pack_src(f); });
constexpr auto pack_dst_format = ttsim::jit::per_cb<unsigned char>([](uint8_t f) { return f; });

constexpr auto unpack_tile_num_faces = ttsim::jit::all_cbs<uint8_t>(4);
constexpr auto unpack_partial_face = ttsim::jit::all_cbs<uint8_t>(0);
constexpr auto unpack_tile_face_r_dim = ttsim::jit::all_cbs<uint8_t>(16);
constexpr auto unpack_narrow_tile = ttsim::jit::all_cbs<uint8_t>(0);
constexpr auto unpack_tile_r_dim = ttsim::jit::all_cbs<uint8_t>(32);
constexpr auto unpack_tile_c_dim = ttsim::jit::all_cbs<uint8_t>(32);
constexpr auto unpack_tile_size = ttsim::jit::per_cb<uint16_t>([](uint8_t f) { return ttsim::jit::tile_size(f); });
constexpr auto pack_tile_num_faces = ttsim::jit::all_cbs<uint8_t>(4);
constexpr auto pack_partial_face = ttsim::jit::all_cbs<uint8_t>(0);
constexpr auto pack_tile_face_r_dim = ttsim::jit::all_cbs<uint8_t>(16);
constexpr auto pack_narrow_tile = ttsim::jit::all_cbs<uint8_t>(0);
constexpr auto pack_tile_r_dim = ttsim::jit::all_cbs<uint8_t>(32);
constexpr auto pack_tile_c_dim = ttsim::jit::all_cbs<uint8_t>(32);
constexpr auto pack_tile_size = ttsim::jit::per_cb<uint16_t>([](uint8_t f) { return ttsim::jit::tile_size(f); });
