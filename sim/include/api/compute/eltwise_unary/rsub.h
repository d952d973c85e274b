// Reverse subtraction from a scalar on the SFPU, in place on a DST tile (api/compute/eltwise_unary/rsub.h):
// scalar - x (fp32 bits), and the Int32 form on words. Exact in fp32.
#pragma once

#include "api/compute/common_globals.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "ttsim/sfpu.h"

namespace ttsim::rsub {
inline float value(float x, const uint32_t* p) { return sfpu::as_float(p[0]) - x; }
inline uint32_t int32_word(uint32_t x, const uint32_t* p) { return p[0] - x; }
}  // namespace ttsim::rsub

namespace ckernel {

ALWI void rsub_tile_init() { ttsim::sfpu::setup("rsub"); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rsub_tile(uint32_t idst, uint32_t scalar) {
    ttsim::sfpu::unary<ttsim::rsub::value>("rsub_tile", "rsub", ttsim::sfpu_cost::kSimple, idst, VectorMode::RC, scalar);
}
ALWI void rsub_unary_int32_tile_init() { ttsim::sfpu::setup("rsub_int32"); }
ALWI void rsub_unary_int32_tile(uint32_t idst, uint32_t scalar) {
    ttsim::sfpu::unary_words<ttsim::rsub::int32_word>("rsub_unary_int32_tile", "rsub_int32", ttsim::sfpu_cost::kSimple, idst,
                                                      true, scalar);
}

}  // namespace ckernel
