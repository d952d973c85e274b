// Tensix data types kernels name (tt-metal's tensix_types.h): DataFormat with the device's encoding.
#pragma once

#include "ttsim/common.h"

// Whether a data format is the 32-bit unsigned integer one (UInt32).
constexpr bool is_uint32_format(DataFormat format) { return format == DataFormat::UInt32; }
