// Fault: an integer division by zero (the divisor is a runtime arg, zero here).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    volatile uint32_t q = get_arg_val<uint32_t>(2) / get_arg_val<uint32_t>(1);
    (void)q;
}
