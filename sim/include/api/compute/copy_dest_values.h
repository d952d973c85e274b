// Copy one DST tile to another on the SFPU (api/compute/copy_dest_values.h): one load and one store
// per row, the words unchanged in any DST format. Cost: the simple-op figure, as the simulator has
// charged it.
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "ttsim/sfpu.h"

namespace ttsim::copy_dest {
inline uint32_t word(uint32_t x, const uint32_t*) { return x; }
}  // namespace ttsim::copy_dest

namespace ckernel {

ALWI void copy_dest_values_init() { ttsim::sfpu::setup("copy_dest_values"); }
template <DataFormat DATA_FORMAT>
ALWI void copy_dest_values(uint32_t idst_in, uint32_t idst_out) {
    ttsim::sfpu::unary_words_to<ttsim::copy_dest::word>("copy_dest_values", "copy_dest_values", ttsim::sfpu_cost::kSimple,
                                                        idst_in, idst_out, false);
}
ALWI void copy_dest_values(uint32_t idst_in, uint32_t idst_out) { copy_dest_values<DataFormat::Float32>(idst_in, idst_out); }

}  // namespace ckernel
