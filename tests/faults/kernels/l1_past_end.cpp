// Fault: a raw store just past the end of this core's L1.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t l1_bottom = get_semaphore(0);  // L1 offset 0
    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(uintptr_t(l1_bottom + 1499136 + 64));
    *p = 1;
}
