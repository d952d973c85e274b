// Data-format conversion inside DST on the SFPU (api/compute/eltwise_unary/typecast.h), following
// tt-llk's typecast rules: float to Int32/UInt32 truncates toward zero and saturates (negative values
// give 0 for the unsigned formats), float to UInt16/UInt8 rounds to nearest and clamps, integers to
// float convert exactly or round to nearest; a Float16_b output is rounded to bf16 even in a 32-bit
// DST. The template arguments are tt::DataFormat values. Cost: an estimate (ttsim/sfpu_cost.h).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::typecast {
constexpr bool is_float(uint32_t f) {
    return f == uint32_t(DataFormat::Float32) || f == uint32_t(DataFormat::Float16_b) || f == uint32_t(DataFormat::Float16) ||
           f == uint32_t(DataFormat::Bfp8_b) || f == uint32_t(DataFormat::Bfp4_b);
}
constexpr bool is_int(uint32_t f) {
    return f == uint32_t(DataFormat::Int32) || f == uint32_t(DataFormat::UInt32) || f == uint32_t(DataFormat::UInt16) ||
           f == uint32_t(DataFormat::UInt8);
}
// Round-to-nearest-even to bf16, NaN kept quiet.
inline float to_bf16(float x) {
    uint32_t u = sfpu::as_word(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return sfpu::as_float((u | 0x00400000u) & 0xffff0000u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return sfpu::as_float(u & 0xffff0000u);
}
inline uint32_t float_to_int32(float x) {
    if (std::isnan(x)) return 0x80000000u;
    if (x >= 2147483648.0f) return 0x7fffffffu;
    if (x <= -2147483648.0f) return 0x80000000u;
    return uint32_t(int32_t(x));
}
inline uint32_t float_to_uint(float x, double top, bool round) {
    if (!(x > 0.0f)) return 0;
    const double v = round ? std::nearbyint(double(x)) : std::trunc(double(x));
    return v >= top ? uint32_t(top) : uint32_t(v);
}
template <uint32_t IN, uint32_t OUT>
inline uint32_t convert(uint32_t w, const uint32_t*) {
    constexpr uint32_t kInt32 = uint32_t(DataFormat::Int32), kUInt32 = uint32_t(DataFormat::UInt32),
                       kUInt16 = uint32_t(DataFormat::UInt16), kUInt8 = uint32_t(DataFormat::UInt8),
                       kBf16 = uint32_t(DataFormat::Float16_b);
    float value;
    if constexpr (is_float(IN)) {
        value = sfpu::as_float(w);
    } else if constexpr (IN == kInt32) {
        value = float(int32_t(w));
    } else {
        value = float(w);
    }
    if constexpr (is_float(OUT)) {
        return sfpu::as_word(OUT == kBf16 ? to_bf16(value) : value);
    } else if constexpr (is_float(IN)) {
        if constexpr (OUT == kInt32) return float_to_int32(value);
        if constexpr (OUT == kUInt32) return float_to_uint(value, 4294967295.0, false);
        if constexpr (OUT == kUInt16) return float_to_uint(value, 65535.0, true);
        return float_to_uint(value, 255.0, true);
    } else {
        // integer to integer: clamp into the output's range
        const int64_t v = IN == kInt32 ? int64_t(int32_t(w)) : int64_t(w);
        const int64_t top = OUT == kUInt16 ? 65535 : OUT == kUInt8 ? 255 : OUT == kInt32 ? 2147483647 : 4294967295ll;
        const int64_t bottom = OUT == kInt32 ? -2147483648ll : 0;
        return uint32_t(v < bottom ? bottom : v > top ? top : v);
    }
}
}  // namespace ttsim::typecast

namespace ckernel {

template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE>
ALWI void typecast_tile_init() {
    ttsim::sfpu::setup("typecast");
}
template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void typecast_tile(uint32_t idst) {
    constexpr bool known = (ttsim::typecast::is_float(IN_DTYPE) || ttsim::typecast::is_int(IN_DTYPE)) &&
                           (ttsim::typecast::is_float(OUT_DTYPE) || ttsim::typecast::is_int(OUT_DTYPE));
    if constexpr (known) {
        ttsim::sfpu::unary_words<ttsim::typecast::convert<IN_DTYPE, OUT_DTYPE>>(
            "typecast_tile", "typecast", ttsim::sfpu_cost::kConvert, idst, ttsim::typecast::is_int(OUT_DTYPE));
    } else {
        TTSIM_NOT_MODELED("typecast_tile", "conversions from or to this data format (Int8, Lf8, Bfp2, ...)");
    }
}

}  // namespace ckernel
