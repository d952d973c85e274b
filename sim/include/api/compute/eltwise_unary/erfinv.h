// Inverse error function on the SFPU, in place on a DST tile (api/compute/eltwise_unary/erfinv.h).
// Value: Newton's method on the C library's erf in double from a logarithmic first guess, rounded to
// fp32 (tt-llk uses a log/sqrt approximation); +-inf at +-1, NaN outside [-1, 1].
// Cost: a log, a sqrt and a polynomial (estimate).
#pragma once

#include <limits>

#include "api/compute/common_globals.h"
#include "ttsim/sfpu.h"

namespace ttsim::erfinv {
inline float value(float xf, const uint32_t*) {
    const double x = xf;
    if (std::isnan(x) || x < -1.0 || x > 1.0) return std::numeric_limits<float>::quiet_NaN();
    if (x == 1.0 || x == -1.0) return std::copysign(std::numeric_limits<float>::infinity(), xf);
    // Winitzki's closed form as the starting point, then Newton steps on erf(y) - x.
    const double a = 0.147, ln = std::log(1.0 - x * x), t = 2.0 / (3.14159265358979323846 * a) + ln / 2.0;
    double y = std::copysign(std::sqrt(std::sqrt(t * t - ln / a) - t), x);
    for (int k = 0; k < 4; ++k) y -= (std::erf(y) - x) / (1.1283791670955126 * std::exp(-y * y));
    return float(y);
}
}  // namespace ttsim::erfinv

namespace ckernel {

ALWI void erfinv_tile_init() { ttsim::sfpu::setup("erfinv"); }
ALWI void erfinv_tile(uint32_t idst) {
    ttsim::sfpu::unary<ttsim::erfinv::value>("erfinv_tile", "erfinv",
                                             ttsim::sfpu_cost::kLog + ttsim::sfpu_cost::kSqrt + ttsim::sfpu_cost::kPolynomial,
                                             idst);
}

}  // namespace ckernel
