// tt-llk's low-level header for the FPU's binary operations (llk_math_eltwise_binary.h). Kernels that
// include it reach the operations through the API; the simulator's LLK-level binary calls are in
// llk_math_binary_api.h.
#pragma once

#include "llk_math_binary_api.h"
