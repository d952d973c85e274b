// softcap (api/compute/eltwise_unary/softcap.h): tt-metal implements it for Blackhole and Quasar only;
// on Wormhole a call does not compile on the device, so here it stops the run.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ckernel {

ALWI void softcap_tile_init() { TTSIM_NOT_MODELED("softcap_tile_init", "softcap has no Wormhole implementation in tt-metal"); }
ALWI void softcap_tile(uint32_t, uint32_t, uint32_t) {
    TTSIM_NOT_MODELED("softcap_tile", "softcap has no Wormhole implementation in tt-metal");
}

}  // namespace ckernel
