// What softmax kernels include for their SFPU steps (api/compute/softmax.h): exp and reciprocal.
#pragma once

#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/recip.h"
