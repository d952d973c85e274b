// What every compute API header shares (api/compute/common_globals.h): ALWI, the thread-selection
// macros (all three keep their argument: the simulator runs unpack, math and pack of a compute kernel
// in one fiber, in program order), namespace ckernel, and the names tt-metal's JIT generates for a
// compute kernel from its compute config.
#pragma once

#include <cstdint>

#include "chlkc_descriptors.h"
#include "ckernel.h"
#include "ttsim/common.h"

// On the device the firmware's LLK I/O headers, included into every compute kernel, open namespace
// ckernel to it; the compute API and the LLK enums are used unqualified.
using namespace ckernel;

// tt-metal compiles a compute kernel once per TRISC, with UCK_CHLKC_UNPACK, _MATH or _PACK defined;
// kernels and ttnn's kernel_lib test them to tell compute code from data-movement code. The simulator
// compiles a compute kernel once and runs all three threads' parts in one fiber; it is marked as the
// math thread's build (whose formats are the unpacker's view of each CB).
#if !defined(UCK_CHLKC_UNPACK) && !defined(UCK_CHLKC_MATH) && !defined(UCK_CHLKC_PACK)
#define UCK_CHLKC_MATH 1
#endif

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
