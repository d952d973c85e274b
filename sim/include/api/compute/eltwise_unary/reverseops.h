// api/compute/eltwise_unary/reverseops.h: rsub_tile with a scalar, as rsub.h declares it.
#pragma once

#include "api/compute/eltwise_unary/rsub.h"
