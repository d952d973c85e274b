// Records of the pipelined GDN scan (scan_pipelined_program): each chunk's record (P, then T~ and -T^
// interleaved; scan_prep_chunk.h) goes from the value head's preparing core straight into the L1 of
// each of the head's sequential cores, never through DRAM.
//
// A sequential core (consumer i of its head, i = its value block) keeps the records in one CB of
// `slots` record slots. Chunk c is prepared by the head's producer j = c % producers and is that
// producer's k-th record, k = c / producers. Per chunk:
//   consumer reader:  cb_reserve_back(record CB) -> its write pointer into producer j's address word
//                     (i, k % slots) -> increment producer j's free count i
//   producer writer:  wait every free count i >= k + 1 -> write the record's tiles to each consumer's
//                     slot (one multicast when they are a row segment) -> increment each ready count j
//   consumer reader:  wait ready count j >= k + 1 -> cb_push_back(record CB)
// Counts only grow, so every wait is an "at least" wait. A consumer can name record k + slots only after
// popping the record k's slot held, so the address word of record k is read before it is overwritten.
#pragma once

#include <cstdint>

namespace gdn::pipeline {

// Producer semaphores: per consumer i a group of 1 + slots: its free count, then its address words.
inline uint32_t free_sem(uint32_t consumer, uint32_t slots) { return consumer * (1 + slots); }
inline uint32_t address_sem(uint32_t consumer, uint32_t k, uint32_t slots) {
    return consumer * (1 + slots) + 1 + k % slots;
}
// Consumer semaphores: ready counts 0 .. producers - 1 (one per producer of the head), then the word
// the reader sends its slot address from at index `producers`.

}  // namespace gdn::pipeline
