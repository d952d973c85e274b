// Fault: a loop of API calls that move nothing and take no modeled time: only the CPU-time watchdog
// sees that the run makes no progress.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    volatile uint32_t sink = 0;
    for (;;) sink = get_arg_val<uint32_t>(0);
}
