// Fault: a loop that calls the API (each barrier costs modeled cycles) but never moves any data.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    for (;;) noc_async_read_barrier();
}
