// Force-included (-include) into every kernel translation unit the simulator compiles: the entry
// points through which the simulator binds its API table and starts the kernel.
#pragma once

#include "internal/tt-1xx/cache.h"
#include "ttsim/kernel_api.h"
#include "ttsim/riscv_fence.h"
#include "noc_parameters.h"  // every kernel sees the NoC alignments (tt-metal: firmware_common.h)

void kernel_main();

ttsim::KernelApi* ttsim_api = nullptr;

extern "C" __attribute__((visibility("default"))) void ttsim_bind(ttsim::KernelApi* api) { ttsim_api = api; }
extern "C" __attribute__((visibility("default"))) void ttsim_kernel_entry() { kernel_main(); }
