// What layernorm kernels include for their SFPU steps (api/compute/layernorm.h): the compute API and
// rsqrt.
#pragma once

#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_unary/rsqrt.h"
