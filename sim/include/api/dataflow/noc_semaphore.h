// The Semaphore object for data-movement kernels (api/dataflow/noc_semaphore.h is this include).
#pragma once

#include "api/semaphore.h"
