// The multicast hand-shake both sides of the example matmul use to share an input block along a row
// or column of the grid: receivers reserve room and say so, the sender (which has the block in its
// own CB at the same L1 address) waits for all of them, multicasts the block, then flags it valid.
#pragma once

#include "api/dataflow/dataflow_api.h"

namespace block_multicast {

constexpr uint32_t kValid = 1;
constexpr uint32_t kInvalid = 0;

struct Rect {
    uint32_t x0, y0, x1, y1;  // NoC coordinates of the receivers' rectangle, from the corner the sender's NoC reaches first
};

// Sender side: the block at `l1` (bytes long) goes to every receiver's same address.
inline void send(uint32_t l1, uint32_t bytes, const Rect& r, uint32_t num_receivers, uint32_t ready_addr,
                 uint32_t valid_addr) {
    if (num_receivers == 0) return;
    volatile tt_l1_ptr uint32_t* ready = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(ready_addr);
    volatile tt_l1_ptr uint32_t* valid = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(valid_addr);
    // Every receiver has room for the block once it has said so.
    noc_semaphore_wait(ready, num_receivers);
    noc_semaphore_set(ready, 0);
    noc_async_write_multicast(l1, get_noc_multicast_addr(r.x0, r.y0, r.x1, r.y1, l1), bytes, num_receivers);
    noc_semaphore_set(valid, kValid);
    noc_semaphore_set_multicast(valid_addr, get_noc_multicast_addr(r.x0, r.y0, r.x1, r.y1, valid_addr), num_receivers);
    noc_async_write_barrier();
}

// Receiver side: tell the sender there is room, then wait until the block has arrived.
inline void receive(uint32_t sender_x, uint32_t sender_y, uint32_t ready_addr, uint32_t valid_addr) {
    volatile tt_l1_ptr uint32_t* valid = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(valid_addr);
    noc_semaphore_set(valid, kInvalid);
    noc_semaphore_inc(get_noc_addr(sender_x, sender_y, ready_addr), 1);
    noc_semaphore_wait(valid, kValid);
}

}  // namespace block_multicast
