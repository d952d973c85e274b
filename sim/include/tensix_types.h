// Tensix data types kernels name (tt-metal's tensix_types.h): DataFormat with the device's encoding.
#pragma once

#include "ttsim/common.h"
