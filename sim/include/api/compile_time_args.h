// Compile-time arguments arrive as -DKERNEL_COMPILE_TIME_ARGS=a,b,c (as tt-metal's JIT passes them).
// Named ones arrive as KERNEL_COMPILE_TIME_ARG_MAP, a list of {"name", value} pairs defined by a
// header the JIT generates and force-includes (ttprefill/device/jit.py), as tt-metal's JIT does.
#pragma once

#include <array>
#include <cstdint>

#include "ttsim/common.h"

template <class T, class... Ts>
constexpr std::array<T, sizeof...(Ts)> make_array(Ts... values) {
    return {T(values)...};
}

#ifndef KERNEL_COMPILE_TIME_ARGS
#define KERNEL_COMPILE_TIME_ARGS
#endif

constexpr auto kernel_compile_time_args = make_array<std::uint32_t>(KERNEL_COMPILE_TIME_ARGS);

template <uint32_t Idx>
constexpr uint32_t get_ct_arg() {
    static_assert(Idx < kernel_compile_time_args.size(), "compile-time argument index out of range");
    return kernel_compile_time_args[Idx];
}

#define get_compile_time_arg_val(arg_idx) get_ct_arg<arg_idx>()

#ifdef KERNEL_COMPILE_TIME_ARG_MAP
#include <string_view>
#include <utility>

namespace {
constexpr std::pair<std::string_view, uint32_t> named_args_map[] = {KERNEL_COMPILE_TIME_ARG_MAP};
}

// Not constexpr on purpose: reaching it while evaluating a constant (the usual use) is a compile
// error that names it; reached at run time it stops the run. The simulator's own, not kernel API.
namespace ttsim::detail {
inline uint32_t named_compile_time_arg_not_found() {
    TTSIM->fail("get_named_compile_time_arg_val", "no named compile-time argument of that name was given");
    return 0;
}
}  // namespace ttsim::detail

constexpr uint32_t get_named_ct_arg(std::string_view name) {
    for (const auto& [arg_name, arg_value] : named_args_map) {
        if (name == arg_name) {
            return arg_value;
        }
    }
    return ttsim::detail::named_compile_time_arg_not_found();
}

constexpr uint32_t get_named_compile_time_arg_val(std::string_view name) { return get_named_ct_arg(name); }
#endif
