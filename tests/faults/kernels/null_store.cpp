// Fault: a store through a null pointer (the address comes from a runtime arg, so the compiler
// cannot see it is null).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(uintptr_t(get_arg_val<uint32_t>(3)));
    *p = 42;
}
