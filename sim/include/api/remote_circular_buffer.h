// Remote (global) circular buffers (api/remote_circular_buffer.h): a sender core's buffer whose pages
// land in buffers on receiver cores, with page counters kept over the NoC. Declared so kernels that use
// them compile; the simulator's programs have no global circular buffers, so each call stops the run.
#pragma once

#include <cstdint>

#include "api/alignment.h"
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/debug/assert.h"
#include "api/lock.h"
#include "internal/circular_buffer_interface.h"

namespace experimental {

static constexpr uint32_t REMOTE_CB_LOCAL_PAGES_ACKED_OFFSET = sizeof(uint32_t);
static constexpr uint32_t REMOTE_CB_LOCAL_PAGES_STRIDE = 2 * sizeof(uint32_t);

namespace detail {
constexpr uint8_t default_noc_mode = 0;
constexpr uint8_t default_cmd_buf = write_at_cmd_buf;
inline void remote_cb_unmodeled(const char* call) {
    TTSIM->fail(call, "not modeled by the simulator: global (remote) circular buffers");
}
}  // namespace detail

template <bool update_remote_over_noc = false>
FORCE_INLINE void resize_remote_sender_cb_interface(
    uint32_t cb_id, uint32_t page_size, uint8_t noc, uint8_t nm = detail::default_noc_mode, bool posted = true,
    uint8_t cmd_buf = detail::default_cmd_buf) {
    detail::remote_cb_unmodeled("resize_remote_sender_cb_interface");
}
template <bool update_remote_over_noc = false>
FORCE_INLINE void resize_remote_receiver_cb_interface(
    uint32_t cb_id, uint32_t page_size, uint8_t noc, uint8_t nm = detail::default_noc_mode, bool posted = true,
    uint8_t cmd_buf = detail::default_cmd_buf) {
    detail::remote_cb_unmodeled("resize_remote_receiver_cb_interface");
}
FORCE_INLINE void remote_cb_wait_front(uint32_t cb_id, uint32_t num_pages) {
    detail::remote_cb_unmodeled("remote_cb_wait_front");
}
FORCE_INLINE void remote_cb_pop_front(uint32_t cb_id, uint32_t num_pages, uint8_t noc = noc_index) {
    detail::remote_cb_unmodeled("remote_cb_pop_front");
}
FORCE_INLINE void remote_cb_reserve_back(uint32_t cb_id, uint32_t num_pages) {
    detail::remote_cb_unmodeled("remote_cb_reserve_back");
}
FORCE_INLINE void remote_cb_sender_barrier(uint32_t cb_id) { detail::remote_cb_unmodeled("remote_cb_sender_barrier"); }
template <bool skip_ptr_update = true>
FORCE_INLINE void remote_cb_push_back_and_write_pages(
    uint32_t cb_id, uint32_t local_cb_addr, uint32_t num_pages, uint32_t num_rows, uint32_t coalesced_num_pages_per_row,
    uint32_t coalesced_page_size, uint8_t noc = noc_index) {
    detail::remote_cb_unmodeled("remote_cb_push_back_and_write_pages");
}
template <uint32_t num_local_cbs>
FORCE_INLINE void align_local_cbs_to_remote_cb(uint32_t remote_cb_index, const uint32_t (&local_cb_indices)[num_local_cbs]) {
    detail::remote_cb_unmodeled("align_local_cbs_to_remote_cb");
}
FORCE_INLINE void update_remote_cb_config_in_l1(uint32_t remote_cb_index) {
    detail::remote_cb_unmodeled("update_remote_cb_config_in_l1");
}

}  // namespace experimental
