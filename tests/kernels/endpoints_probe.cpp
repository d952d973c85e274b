// Test kernel for the Noc endpoints: on the sender, page 0 of a DRAM tensor comes in through an
// AllocatorBank endpoint into a CircularBuffer object and goes out through a precomposed NoC address
// (from a CircularBufferView of the read pointer); then an inline NoC write sets the peer's semaphore,
// and the peer answers with a multicast semaphore increment.
//
// Compile-time args: TensorAccessorArgs of the output at 0.
// Runtime args: 0 role (0 sender, 1 peer), 1 input address, 2 output address, 3-4 the other core's NoC
// x and y, 5 semaphore id.
#include "api/dataflow/circular_buffer.h"
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/endpoints.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/noc_semaphore.h"

void kernel_main() {
    const uint32_t role = get_arg_val<uint32_t>(0);
    const uint32_t in_addr = get_arg_val<uint32_t>(1), out_addr = get_arg_val<uint32_t>(2);
    const uint32_t other_x = get_arg_val<uint32_t>(3), other_y = get_arg_val<uint32_t>(4);
    const uint32_t sem_id = get_arg_val<uint32_t>(5);
    Noc noc;
    Semaphore<> sem(sem_id);
    if (role == 1) {
        sem.wait(7);
        sem.inc_multicast(noc, other_x, other_y, other_x, other_y, 5, 1);
        return;
    }
    CircularBuffer cb(tt::CBIndex::c_0);
    const uint32_t page = cb.get_tile_size();
    cb.reserve_back(1);
    noc.async_read(AllocatorBank<AllocatorBankType::DRAM>{}, cb, page, {.bank_id = 0, .addr = in_addr}, {});
    noc.async_read_barrier<NocOptions::TXN_ID>({.trid = 3});
    cb.push_back(1);
    cb.wait_front(1);
    const auto out = TensorAccessor(TensorAccessorArgs<0>(), out_addr);
    noc.async_write(use<CircularBuffer::AddrSelector::READ_PTR>(cb), PrecomposedUnicastEndpoint{}, page, {},
                    {.noc_addr = out.get_noc_addr(0)});
    noc.async_write_barrier();
    cb.pop_front(1);
    noc.inline_dw_write(UnicastEndpoint{}, 7, {.noc_x = other_x, .noc_y = other_y, .addr = uint32_t(get_semaphore(sem_id))});
    sem.wait(5);
}
