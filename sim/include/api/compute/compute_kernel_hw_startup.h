// One-time hardware set-up at the start of a compute kernel (api/compute/compute_kernel_hw_startup.h).
#pragma once

#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/reg_api.h"

ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb) { TTSIM->hw_startup(icb0, icb1, ocb); }
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t ocb) { TTSIM->hw_startup(icb0, icb0, ocb); }
