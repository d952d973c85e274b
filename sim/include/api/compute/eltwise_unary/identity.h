// identity on the SFPU (api/compute/eltwise_unary/identity.h): a DST tile copied onto itself (a load
// and a store per row), values unchanged.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::identity {
inline uint32_t word(uint32_t x, const uint32_t*) { return x; }
}  // namespace ttsim::identity

namespace ckernel {

ALWI void identity_tile_init() { ttsim::sfpu::setup("identity"); }
ALWI void identity_tile(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::identity::word>("identity_tile", "identity", 2 * ttsim::sfpu_cost::kPass, idst, false);
}
ALWI void identity_tile_uint32(uint32_t idst) {
    ttsim::sfpu::unary_words<ttsim::identity::word>("identity_tile_uint32", "identity", 2 * ttsim::sfpu_cost::kPass, idst);
}

}  // namespace ckernel
