// Kernel debug printing (api/debug/dprint.h): DPRINT("format with {} fields\n", args...).
//
// On the device, DPRINT compiles to nothing unless the program is built with printing enabled
// (DEBUG_PRINT_ENABLED, set by tt-metal when TT_METAL_DPRINT_CORES names cores). The simulator does
// the same; with DEBUG_PRINT_ENABLED defined for a kernel, each print goes to stderr, prefixed with
// the core, at no modeled cost. The stream form (DPRINT << x) was removed from tt-metal and is refused
// at compile time, as there.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include "api/debug/waypoint.h"
#include "ttsim/common.h"

class OldStyleDevicePrint {};
inline OldStyleDevicePrint DPRINT;

template <typename Type>
OldStyleDevicePrint operator<<(OldStyleDevicePrint dp, Type) {
    static_assert(sizeof(Type) == 0, "Old style DPRINT is deprecated. Use DPRINT(format, ...) instead.");
    return dp;
}

#if defined(DEBUG_PRINT_ENABLED) && !defined(FORCE_DPRINT_OFF)
namespace ttsim::dprint {

template <typename T>
void append(std::string& out, const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
        out += v ? "true" : "false";
    } else if constexpr (std::is_floating_point_v<T>) {
        out += std::to_string(double(v));
    } else if constexpr (std::is_convertible_v<T, const char*>) {
        out += static_cast<const char*>(v);
    } else if constexpr (std::is_enum_v<T>) {
        out += std::to_string(static_cast<long long>(v));
    } else if constexpr (std::is_signed_v<T>) {
        out += std::to_string(static_cast<long long>(v));
    } else if constexpr (std::is_convertible_v<T, uint64_t>) {
        out += std::to_string(static_cast<unsigned long long>(static_cast<uint64_t>(v)));
    } else {
        static_assert(sizeof(T) == 0, "DPRINT: the simulator prints numbers, bools and strings only");
    }
}

// "{}" takes the next argument; "{{" and "}}" are literal braces.
inline void format_into(std::string& out, const char* f) {
    for (; *f; ++f) {
        if ((f[0] == '{' && f[1] == '{') || (f[0] == '}' && f[1] == '}')) ++f;
        out += *f;
    }
}
template <typename T, typename... Rest>
void format_into(std::string& out, const char* f, const T& first, const Rest&... rest) {
    for (; *f; ++f) {
        if (f[0] == '{' && f[1] == '}') {
            append(out, first);
            format_into(out, f + 2, rest...);
            return;
        }
        if ((f[0] == '{' && f[1] == '{') || (f[0] == '}' && f[1] == '}')) ++f;
        out += *f;
    }
}

template <typename... Args>
void print(const char* thread, const char* format, const Args&... args) {
    std::string out = "[core " + std::to_string(TTSIM->my_logical_x()) + "," + std::to_string(TTSIM->my_logical_y()) +
                      " " + thread + "] ";
    format_into(out, format, args...);
    std::fputs(out.c_str(), stderr);
}

}  // namespace ttsim::dprint

#define DEVICE_PRINT(format, ...) ttsim::dprint::print("", format, ##__VA_ARGS__)
#define DEVICE_PRINT_UNPACK(format, ...) ttsim::dprint::print("unpack", format, ##__VA_ARGS__)
#define DEVICE_PRINT_MATH(format, ...) ttsim::dprint::print("math", format, ##__VA_ARGS__)
#define DEVICE_PRINT_PACK(format, ...) ttsim::dprint::print("pack", format, ##__VA_ARGS__)
#define DEVICE_PRINT_DATA0(format, ...) ttsim::dprint::print("data0", format, ##__VA_ARGS__)
#define DEVICE_PRINT_DATA1(format, ...) ttsim::dprint::print("data1", format, ##__VA_ARGS__)
#else
#define DEVICE_PRINT(format, ...)
#define DEVICE_PRINT_UNPACK(format, ...)
#define DEVICE_PRINT_MATH(format, ...)
#define DEVICE_PRINT_PACK(format, ...)
#define DEVICE_PRINT_DATA0(format, ...)
#define DEVICE_PRINT_DATA1(format, ...)
#endif

#define DPRINT(format, ...) DEVICE_PRINT(format, ##__VA_ARGS__)
#define DPRINT_UNPACK(format, ...) DEVICE_PRINT_UNPACK(format, ##__VA_ARGS__)
#define DPRINT_MATH(format, ...) DEVICE_PRINT_MATH(format, ##__VA_ARGS__)
#define DPRINT_PACK(format, ...) DEVICE_PRINT_PACK(format, ##__VA_ARGS__)
#define DPRINT_DATA0(format, ...) DEVICE_PRINT_DATA0(format, ##__VA_ARGS__)
#define DPRINT_DATA1(format, ...) DEVICE_PRINT_DATA1(format, ##__VA_ARGS__)
