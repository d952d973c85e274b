// What kernels reach through tt-llk's ckernel.h: namespace ckernel with the LLK enums (llk_defs.h) and
// the definitions of ckernel_defs.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ckernel_defs.h"
#include "llk_defs.h"
#include "ttsim/common.h"
