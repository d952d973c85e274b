// The packer's reduce mask (Wormhole's llk_pack_reduce_api.h): on the device it packs zeros outside a
// reduction's result row/column. The simulator's reduce_tile leaves those DST elements as they were,
// which after a tile_regs_release are zeros, so a reduction into a fresh DST tile packs the same tile.
// A reduction into a tile that held other values would pack them where the device packs zeros: that
// case is not modeled.
#pragma once

#include <cstdint>

#include "ckernel_defs.h"
#include "llk_defs.h"

template <ckernel::ReduceDim dim, ckernel::PackMode pack_mode = ckernel::PackMode::Default>
inline void llk_pack_reduce_mask_config(std::uint32_t ocb) {
    (void)ocb;
}
inline void llk_pack_reduce_mask_clear() {}
