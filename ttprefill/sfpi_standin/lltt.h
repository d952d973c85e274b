// Stand-in for the SFPI toolchain's lltt.h (Tensix instruction replay-buffer helpers), for syntax
// checks of compute kernels with the host g++: declarations only, every call a no-op.
#pragma once
#include <cstdint>

namespace lltt {
enum ExecMode { NoExec, Exec };
template <ExecMode Mode = NoExec>
inline void record(std::uint32_t, std::uint32_t) {}
template <class... A>
inline void replay(A...) {}
template <class... A>
constexpr std::uint32_t replay_insn(A...) {
    return 0;
}
}  // namespace lltt
