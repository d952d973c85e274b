// The DST register protocol (api/compute/reg_api.h): math acquires and commits, pack waits and releases.
#pragma once

#include "api/compute/common.h"

ALWI void tile_regs_acquire() { TTSIM->regs_acquire(); }
ALWI void tile_regs_wait() { TTSIM->regs_wait(); }
ALWI void tile_regs_commit() { TTSIM->regs_commit(); }
ALWI void tile_regs_release() { TTSIM->regs_release(); }
