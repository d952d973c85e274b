// Chunk preparations offloaded to helper cores in the fused GDN scan (ttprefill/ops/gdn.py,
// scan_fused_program): the fused scan runs one value head per core and would leave the rest of the
// grid idle, so each helper core prepares a share of the chunks (P, T~, -T^: scan_prep_chunk.h) for a
// few value heads and sends each record straight into its head's L1.
//
// Protocol per (value head, offloaded chunk), record n of that head, slot n % kRecordSlots:
//   head core reader:  cb_reserve_back(record CB) -> its write pointer into the helper's address
//                      semaphore for (local head, slot) -> increment the helper's free count for the head
//   helper sender:     wait free count >= n + 1 -> read the address -> write the record there ->
//                      increment the head core's ready count
//   head core reader:  wait ready count >= n + 1 -> cb_push_back(record CB)
// Counts only grow, so a wait is a "at least" wait and nothing is ever reset.
#pragma once

#include <cstdint>

namespace gdn::offload {

constexpr uint32_t kMaxHeadsPerHelper = 3;
constexpr uint32_t kRecordSlots = 2;
// Helper core semaphores: free counts, then slot addresses.
constexpr uint32_t kSemFree = 0;                          // + local head
constexpr uint32_t kSemAddress = kMaxHeadsPerHelper;      // + local head * kRecordSlots + slot
// Head core semaphores: records arrived, and a word the reader sends its slot address from.
constexpr uint32_t kSemReady = 0;
constexpr uint32_t kSemMessage = 1;

// Whether chunk c is prepared by the helper: num of every den chunks, spread evenly.
inline bool offloaded(uint32_t c, uint32_t num, uint32_t den) { return (c + 1) * num / den > c * num / den; }

}  // namespace gdn::offload
