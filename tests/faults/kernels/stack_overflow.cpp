// Fault: a 2 MiB local array, twice the stack a kernel gets.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    volatile uint8_t big[2 << 20];
    const uint32_t n = get_arg_val<uint32_t>(2) + sizeof(big) - 1;  // runtime index: the array stays
    big[n % sizeof(big)] = 1;
    big[0] = big[n % sizeof(big)];
}
