// Fault: a loop without API calls that never ends.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    volatile uint32_t spins = 0;
    for (;;) spins = spins + 1;
}
