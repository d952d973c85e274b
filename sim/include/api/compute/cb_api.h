// Circular-buffer calls as a compute kernel sees them (api/compute/cb_api.h).
#pragma once

#include "api/compute/common_globals.h"
#include "internal/circular_buffer_interface.h"

namespace ckernel {

ALWI void cb_wait_front(uint32_t cbid, uint32_t ntiles) { TTSIM->cb_wait_front(cbid, ntiles); }
ALWI void cb_pop_front(uint32_t cbid, uint32_t ntiles) { TTSIM->cb_pop_front(cbid, ntiles); }
ALWI void cb_reserve_back(uint32_t cbid, uint32_t ntiles) { TTSIM->cb_reserve_back(cbid, ntiles); }
ALWI void cb_push_back(uint32_t cbid, uint32_t ntiles) { TTSIM->cb_push_back(cbid, ntiles); }

// The L1 address of tile `tile_index` of the pages at the front of a CB, and one 32-bit word of it
// (read by the unpack thread and handed to math and pack on the device; here one fiber runs all three).
// The tile must be at the front (cb_wait_front first); in a timing-only run the word reads what L1
// holds without the skipped arithmetic (zeros for computed tiles).
ALWI uint32_t get_tile_address(uint32_t cb_id, uint32_t tile_index) {
    if (!TTSIM->cb_pages_available(cb_id, tile_index + 1)) {
        TTSIM->fail("get_tile_address/read_tile_value", "the tile is not at the front of the CB (cb_wait_front first)");
    }
    return TTSIM->cb_read_ptr(cb_id) + TTSIM->cb_page_size(cb_id) * tile_index;
}
ALWI uint32_t read_tile_value(uint32_t cb_id, uint32_t tile_index, uint32_t element_offset) {
    const uint32_t address = get_tile_address(cb_id, tile_index);
    return reinterpret_cast<volatile uint32_t*>(static_cast<uintptr_t>(address))[element_offset];
}

}  // namespace ckernel
