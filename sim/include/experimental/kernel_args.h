// Typed kernel arguments (experimental/kernel_args.h): a runtime argument, a common runtime argument
// or a compile-time value, each read with get_arg(). Programs built with tt-metal's Metal 2.0 host API
// name them in a generated `args` namespace; the handles here are what those names are.
#pragma once

#include <cstdint>

#include "ttsim/common.h"
#ifdef COMPILE_FOR_TRISC
#include "api/compute/common.h"
#else
#include "api/dataflow/dataflow_api.h"
#endif

#define TT_KERNEL static FORCE_INLINE

namespace experimental {

template <typename T>
struct RtaArg {
    uint32_t byte_offset;
};

template <typename T>
struct CrtaArg {
    uint32_t byte_offset;
};

template <typename T>
struct CtaVal {
    T value;
};

// The device reads the argument word from its place in L1; the simulator keeps runtime arguments
// outside simulated L1 and hands out the same word by index.
template <typename T>
FORCE_INLINE T get_arg(RtaArg<T> arg) {
    static_assert(sizeof(T) == 4, "Only uint32_t args are currently supported.");
    return get_arg_val<T>(int(arg.byte_offset / sizeof(uint32_t)));
}

template <typename T>
FORCE_INLINE T get_arg(CrtaArg<T> arg) {
    static_assert(sizeof(T) == 4, "Only uint32_t args are currently supported.");
    return get_common_arg_val<T>(int(arg.byte_offset / sizeof(uint32_t)));
}

template <typename T>
FORCE_INLINE constexpr T get_arg(CtaVal<T> arg) {
    return arg.value;
}

}  // namespace experimental
