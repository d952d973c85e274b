// addcdiv on the SFPU (api/compute/eltwise_unary/addcdiv.h): odst = in0 + value * in1 / in2 for DST
// tiles in0..in2 and a scalar value (fp32 bits), in fp32 (tt-llk multiplies by in2's reciprocal).
#pragma once

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::addcdiv {
inline float value(float a, float b, float c, const uint32_t* p) { return a + sfpu::as_float(p[0]) * b / c; }
}  // namespace ttsim::addcdiv

namespace ckernel {

ALWI void addcdiv_tile_init() { ttsim::sfpu::setup("addcdiv"); }
template <DataFormat data_format, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void addcdiv_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst, uint32_t value) {
    if constexpr (data_format == DataFormat::Float32 || data_format == DataFormat::Float16_b) {
        ttsim::sfpu::ternary<ttsim::addcdiv::value>("addcdiv_tile", "addcdiv",
                                                   ttsim::sfpu_cost::kRecip + 6 * ttsim::sfpu_cost::kPass, idst0, idst1,
                                                   idst2, odst, value);
    } else {
        TTSIM_NOT_MODELED("addcdiv_tile", "integer formats");
    }
}

}  // namespace ckernel
