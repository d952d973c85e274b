// Fault: a failed assert in kernel code (abort on the kernel's fiber).
#undef NDEBUG
#include <cassert>

#include "api/dataflow/dataflow_api.h"

void kernel_main() { assert(get_arg_val<uint32_t>(0) == 1); }
