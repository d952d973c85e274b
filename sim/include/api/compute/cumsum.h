// Column-wise cumulative sum on the SFPU (api/compute/cumsum.h): each column of the DST tile becomes
// its running total from the top row down. The totals carry over to the next cumsum_tile call unless
// `first` is set, so the tiles of one column, fed top to bottom, give a cumulative sum over all of them;
// any other SFPU operation in between loses the totals (call cumsum_tile_init and start again).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"

ALWI void cumsum_tile(uint32_t idst, bool first = true) { TTSIM->sfpu_unary(ttsim::SfpuOp::Cumsum, idst, first ? 1u : 0u, 0); }
ALWI void cumsum_tile_init() { TTSIM->sfpu_init(ttsim::SfpuOp::Cumsum); }
