// Exponential moving average on the SFPU (api/compute/ema.h): declared only; its state carried from
// tile to tile is not modeled, so each call stops the run.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ckernel {

ALWI void ema_init(uint32_t, uint32_t) { TTSIM_NOT_MODELED("ema_init", "the moving average's state across tiles"); }
ALWI void ema_clear_previous_output() {
    TTSIM_NOT_MODELED("ema_clear_previous_output", "the moving average's state across tiles");
}
ALWI void ema_tile(uint32_t) { TTSIM_NOT_MODELED("ema_tile", "the moving average's state across tiles"); }

}  // namespace ckernel
