// addcmul on the SFPU (api/compute/eltwise_unary/addcmul.h): odst = in0 + value * in1 * in2 for DST
// tiles in0..in2 and a scalar value (fp32 bits), in fp32.
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::addcmul {
inline float value(float a, float b, float c, const uint32_t* p) { return a + sfpu::as_float(p[0]) * b * c; }
}  // namespace ttsim::addcmul

namespace ckernel {

ALWI void addcmul_tile_init() { ttsim::sfpu::setup("addcmul"); }
template <DataFormat data_format, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void addcmul_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst, uint32_t value) {
    if constexpr (data_format == DataFormat::Float32 || data_format == DataFormat::Float16_b) {
        // three loads, two multiply-adds, a store (estimate: 6 passes)
        ttsim::sfpu::ternary<ttsim::addcmul::value>("addcmul_tile", "addcmul", 6 * ttsim::sfpu_cost::kPass, idst0, idst1,
                                                   idst2, odst, value);
    } else {
        TTSIM_NOT_MODELED("addcmul_tile", "integer formats");
    }
}

}  // namespace ckernel
