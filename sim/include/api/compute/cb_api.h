// Circular-buffer calls as a compute kernel sees them (api/compute/cb_api.h).
#pragma once

#include "api/compute/common.h"

ALWI void cb_wait_front(uint32_t cbid, uint32_t ntiles) { TTSIM->cb_wait_front(cbid, ntiles); }
ALWI void cb_pop_front(uint32_t cbid, uint32_t ntiles) { TTSIM->cb_pop_front(cbid, ntiles); }
ALWI void cb_reserve_back(uint32_t cbid, uint32_t ntiles) { TTSIM->cb_reserve_back(cbid, ntiles); }
ALWI void cb_push_back(uint32_t cbid, uint32_t ntiles) { TTSIM->cb_push_back(cbid, ntiles); }
