// Calibration microbenchmark (data movement): a core issues `count` NoC transactions of `bytes` each,
// reads or writes, to DRAM pages or to another core's L1, then waits on the barrier. It mirrors the
// access patterns of tt-metal's data-movement performance tests, whose device-measured cycles are
// calibration points of the timing model (ttprefill/calibration.py).
//
// Compile-time args: TensorAccessorArgs of the DRAM buffer at 0.
// Runtime args: 0 DRAM buffer address, 1 bytes per transaction, 2 transaction count,
//   3 mode (0 DRAM read, 1 DRAM write, 2 write to another core's L1), 4 DRAM page stride between
//   transactions (0: every transaction at page 0, one bank), 5-6 target core NoC x/y (mode 2),
//   7 page size of the DRAM buffer, 8 first page (its bank is the one an interleaved buffer puts it in).
// CBs: c_0 the local L1 buffer (at least `bytes`).
#include "api/dataflow/dataflow_api.h"

namespace {
constexpr uint32_t kDramRead = 0, kDramWrite = 1, kL1Write = 2;
}

void kernel_main() {
    constexpr uint32_t cb_local = tt::CBIndex::c_0;
    const uint32_t buffer_addr = get_arg_val<uint32_t>(0);
    const uint32_t bytes = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);
    const uint32_t mode = get_arg_val<uint32_t>(3);
    const uint32_t page_stride = get_arg_val<uint32_t>(4);
    const uint32_t target_x = get_arg_val<uint32_t>(5);
    const uint32_t target_y = get_arg_val<uint32_t>(6);
    const uint32_t page_size = get_arg_val<uint32_t>(7);
    const uint32_t first_page = get_arg_val<uint32_t>(8);

    constexpr auto buffer_args = TensorAccessorArgs<0>();
    const auto buffer = TensorAccessor(buffer_args, buffer_addr, page_size);
    const uint32_t local = get_write_ptr(cb_local);

    for (uint32_t i = 0; i < count; ++i) {
        if (mode == kL1Write) {
            noc_async_write(local, get_noc_addr(target_x, target_y, local), bytes);
        } else {
            const uint64_t dram = buffer.get_noc_addr(first_page + i * page_stride);
            if (mode == kDramRead) {
                noc_async_read(dram, local, bytes);
            } else {
                noc_async_write(local, dram, bytes);
            }
        }
    }
    if (mode == kDramRead) {
        noc_async_read_barrier();
    } else {
        noc_async_write_barrier();
    }
}
