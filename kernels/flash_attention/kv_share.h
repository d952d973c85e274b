// K/V sharing inside a group of cores (a segment of one grid row) whose units read the same kv head:
// the group's first core (the sender) reads each K/V block from the cache pages once and multicasts it
// to the others, which would otherwise each read the same bytes from DRAM. Every core of a group
// reserves and pushes the same blocks of cb_k / cb_v in the same order, so the block sits at the same
// L1 address on each of them.
//
// Hand-shake per block: a receiver reserves room, clears its "valid" flag and increments the sender's
// "ready" count; the sender waits for every receiver, multicasts the block and then sets "valid" on all
// of them (the flag follows the data on the same NoC).
#pragma once

#include "api/dataflow/dataflow_api.h"

namespace fa_share {

constexpr uint32_t kAlone = 0;     // not in a sharing group: reads its own blocks
constexpr uint32_t kSender = 1;    // reads from DRAM and multicasts
constexpr uint32_t kReceiver = 2;  // gets every block from the sender

constexpr uint32_t kValid = 1;
constexpr uint32_t kInvalid = 0;

struct Group {
    uint32_t role;
    uint32_t receivers;        // cores the sender multicasts to
    uint32_t x0, y0, x1, y1;   // NoC coordinates of the receivers' rectangle (multicast corner order)
    uint32_t sender_x, sender_y;
    uint32_t ready_addr, valid_addr;  // L1 addresses of the two semaphores
};

// Sender: waits until every receiver has room, then sends the two regions (K block, V block) and the flag.
inline void send(const Group& g, uint32_t k_l1, uint32_t v_l1, uint32_t bytes) {
    volatile tt_l1_ptr uint32_t* ready = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(g.ready_addr);
    volatile tt_l1_ptr uint32_t* valid = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(g.valid_addr);
    noc_semaphore_wait(ready, g.receivers);
    noc_semaphore_set(ready, 0);
    noc_async_write_multicast(k_l1, get_noc_multicast_addr(g.x0, g.y0, g.x1, g.y1, k_l1), bytes, g.receivers);
    noc_async_write_multicast(v_l1, get_noc_multicast_addr(g.x0, g.y0, g.x1, g.y1, v_l1), bytes, g.receivers);
    noc_semaphore_set(valid, kValid);
    noc_semaphore_set_multicast(g.valid_addr, get_noc_multicast_addr(g.x0, g.y0, g.x1, g.y1, g.valid_addr),
                                g.receivers);
    noc_async_write_barrier();
}

// Receiver: room is reserved; says so and waits until the block has arrived.
inline void receive(const Group& g) {
    volatile tt_l1_ptr uint32_t* valid = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(g.valid_addr);
    noc_semaphore_set(valid, kInvalid);
    noc_semaphore_inc(get_noc_addr(g.sender_x, g.sender_y, g.ready_addr), 1);
    noc_semaphore_wait(valid, kValid);
}

}  // namespace fa_share
