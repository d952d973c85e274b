// What every compute API header shares (api/compute/common_globals.h): ALWI, the thread-selection
// macros (all three keep their argument: the simulator runs unpack, math and pack of a compute kernel
// in one fiber, in program order), namespace ckernel, and the names tt-metal's JIT generates for a
// compute kernel from its compute config.
#pragma once

#include <cstdint>

#include "ckernel.h"
#include "ttsim/common.h"

// The JIT passes the fidelity as a number (-DMATH_FIDELITY=n); kernels and the LLK API use it as a
// ckernel::MathFidelity constant, as tt-metal's generated chlkc_descriptors.h declares it.
#ifdef MATH_FIDELITY
namespace ttsim::jit {
constexpr int kMathFidelity = MATH_FIDELITY;
}
#undef MATH_FIDELITY
#else
namespace ttsim::jit {
constexpr int kMathFidelity = 4;
}
#endif
constexpr ckernel::MathFidelity MATH_FIDELITY = static_cast<ckernel::MathFidelity>(ttsim::jit::kMathFidelity);

// DST is split in two halves, one for math and one for the packer (what the simulator models).
#ifndef DST_SYNC_MODE
#define DST_SYNC_MODE DstSync::SyncHalf
#endif
