// A block form of sub_tiles_bcast_cols for sdpa (api/compute/experimental/sdpa_sub_custom.h): DST[idst + i]
// = icb0 tile (itile0 + i) minus column 0 of icb1's tile itile1 broadcast across it, for i < ct_dim.
// Computed as ct_dim sub_tiles_bcast_cols calls; the device unpacks the icb1 tile once for the block,
// the simulator charges it for each tile (modeled unpack time only).
#pragma once

#include "api/compute/bcast.h"

namespace ckernel {

ALWI void sub_bcast_cols_init_short_custom(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t ct_dim,
                                           std::uint32_t call_line = __builtin_LINE()) {
    (void)ct_dim;
    bcast_init<EltwiseBinaryType::ELWSUB, BroadcastType::COL>(icb0, icb1, call_line);
}
ALWI void sub_tiles_bcast_cols_custom(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1,
                                      std::uint32_t idst, std::uint32_t ct_dim) {
    for (std::uint32_t i = 0; i < ct_dim; ++i) {
        TTSIM->binary_tiles(ttsim::FpuOp::Sub, ttsim::Bcast::Col, icb0, icb1, itile0 + i, itile1, idst + i);
    }
}

}  // namespace ckernel
