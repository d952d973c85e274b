// Printing circular-buffer state and L1 pages from a kernel (api/debug/dprint_pages.h), through DPRINT:
// compiled away unless the kernel is built with DEBUG_PRINT_ENABLED (see api/debug/dprint.h).
#pragma once

#include <cstdint>

#include "api/debug/dprint.h"
#include "internal/circular_buffer_interface.h"

inline void print_cb_details(uint32_t cb_id) {
    DPRINT("cb_id {}: {{ size: {}, limit: {}, page_size: {}, num_pages: {}, rd_ptr: {}, wr_ptr: {} }}\n", cb_id,
           uint32_t(get_local_cb_interface(cb_id).fifo_size), uint32_t(get_local_cb_interface(cb_id).fifo_limit),
           uint32_t(get_local_cb_interface(cb_id).fifo_page_size),
           uint32_t(get_local_cb_interface(cb_id).fifo_num_pages),
           uint32_t(get_local_cb_interface(cb_id).fifo_rd_ptr), uint32_t(get_local_cb_interface(cb_id).fifo_wr_ptr));
}

#if !defined(COMPILE_FOR_TRISC) && defined(DEBUG_PRINT_ENABLED) && !defined(FORCE_DPRINT_OFF)
namespace tt::data_movement::common {

namespace detail {
template <typename T, typename Show>
void print_pages(uint32_t l1_addr, uint32_t per_page, uint32_t npages, uint32_t start, Show show) {
    auto* p = reinterpret_cast<volatile T*>(uintptr_t(l1_addr)) + uint64_t(start) * per_page;
    for (uint32_t page = 0; page < npages; ++page) {
        DPRINT("page {}:", start + page);
        for (uint32_t i = 0; i < per_page; ++i) show(p[uint64_t(page) * per_page + i]);
        DPRINT("\n");
    }
}
}  // namespace detail

inline void print_bf16_pages(uint32_t l1_addr, uint32_t elts_per_page, uint32_t npages, uint32_t start = 0) {
    detail::print_pages<uint16_t>(l1_addr, elts_per_page, npages, start, [](uint16_t v) {
        const uint32_t bits = uint32_t(v) << 16;
        float f;
        __builtin_memcpy(&f, &bits, 4);
        DPRINT(" {}", f);
    });
}
inline void print_f32_pages(uint32_t l1_addr, uint32_t elts_per_page, uint32_t npages, uint32_t start = 0) {
    detail::print_pages<float>(l1_addr, elts_per_page, npages, start, [](float v) { DPRINT(" {}", v); });
}
inline void print_u8_pages(uint32_t l1_addr, uint32_t bytes_per_page, uint32_t npages, uint32_t start = 0) {
    detail::print_pages<uint8_t>(l1_addr, bytes_per_page, npages, start, [](uint8_t v) { DPRINT(" {}", uint32_t(v)); });
}
inline void print_u16_pages(uint32_t l1_addr, uint32_t elts_per_page, uint32_t npages, uint32_t start = 0) {
    detail::print_pages<uint16_t>(l1_addr, elts_per_page, npages, start, [](uint16_t v) { DPRINT(" {}", uint32_t(v)); });
}
inline void print_u32_pages(uint32_t l1_addr, uint32_t elts_per_page, uint32_t npages, uint32_t start = 0) {
    detail::print_pages<uint32_t>(l1_addr, elts_per_page, npages, start, [](uint32_t v) { DPRINT(" {}", v); });
}

}  // namespace tt::data_movement::common
#endif
