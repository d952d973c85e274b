// The DST register protocol (api/compute/reg_api.h): math acquires and commits, pack waits and releases.
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

ALWI void tile_regs_acquire() { TTSIM->regs_acquire(); }
ALWI void tile_regs_wait() { TTSIM->regs_wait(); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tile_regs_commit() {
    TTSIM->regs_commit();
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tile_regs_release() {
    TTSIM->regs_release();
}
// The older single-call forms hold DST for math and packer at once (the packer waits inside
// acquire_dst); the simulator's DST protocol is the four-step one, so these stop the run.
[[deprecated("Use tile_regs_acquire() instead")]] ALWI void acquire_dst() {
    TTSIM->fail("acquire_dst", "not modeled by the simulator: use tile_regs_acquire/commit/wait/release");
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Use tile_regs_release() instead")]] ALWI void release_dst() {
    TTSIM->fail("release_dst", "not modeled by the simulator: use tile_regs_acquire/commit/wait/release");
}

}  // namespace ckernel
