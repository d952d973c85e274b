// CircularBuffer (api/dataflow/circular_buffer.h): the object form of a local circular buffer, for
// data-movement and compute kernels, and its use as a Noc endpoint (the read pointer as a source, the
// write pointer as a destination, or either one through a CircularBufferView). Each call is the
// simulator's circular-buffer call of the same name, with its checks and modeled cost.
#pragma once

#include <cstdint>

#include "api/lock.h"
#include "internal/circular_buffer_interface.h"
#include "ttsim/common.h"
#ifndef COMPILE_FOR_TRISC
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#endif

class CircularBuffer {
public:
    enum class AddrSelector { WRITE_PTR, READ_PTR };

    explicit CircularBuffer(uint32_t cb_id) : cb_id_(cb_id) {}

    uint32_t get_cb_id() const { return cb_id_; }

    void reserve_back(int32_t num_pages) { TTSIM->cb_reserve_back(int(cb_id_), num_pages); }
    void push_back(int32_t num_pages) { TTSIM->cb_push_back(int(cb_id_), num_pages); }
    void wait_front(int32_t num_pages) { TTSIM->cb_wait_front(int(cb_id_), num_pages); }
    void pop_front(int32_t num_pages) { TTSIM->cb_pop_front(int(cb_id_), num_pages); }

#ifdef COMPILE_FOR_TRISC
    // Byte address of a tile of the front block (the unpacker's view).
    uint32_t get_tile_address(uint32_t tile_index) {
        return TTSIM->cb_read_ptr(int(cb_id_)) + TTSIM->cb_page_size(int(cb_id_)) * tile_index;
    }
    uint32_t read_tile_value(uint32_t tile_index, uint32_t element_offset) {
        return reinterpret_cast<volatile uint32_t*>(uintptr_t(get_tile_address(tile_index)))[element_offset];
    }
#else
    uint32_t get_tile_size() const { return ::get_tile_size(cb_id_); }
    DataFormat get_dataformat() const { return ::get_dataformat(cb_id_); }
    bool pages_reservable_at_back(int32_t num_pages) const { return cb_pages_reservable_at_back(cb_id_, num_pages); }
    bool pages_available_at_front(int32_t num_pages) const { return cb_pages_available_at_front(cb_id_, num_pages); }
#endif

    // In 16-byte units in a compute kernel, bytes in a data-movement kernel (as the device's fifo pointers).
    uint32_t get_write_ptr() const { return get_local_cb_interface(cb_id_).fifo_wr_ptr; }
    uint32_t get_read_ptr() const { return get_local_cb_interface(cb_id_).fifo_rd_ptr; }

    // The device records profiler events around the region; nothing to release in the simulator.
    [[nodiscard]] auto scoped_lock() {
        return Lock([]() {});
    }

private:
    uint32_t cb_id_;
};

#ifndef COMPILE_FOR_TRISC
template <CircularBuffer::AddrSelector AddrSel>
struct CircularBufferView {
    const CircularBuffer& cb;
    explicit constexpr CircularBufferView(const CircularBuffer& c) : cb(c) {}
};

template <CircularBuffer::AddrSelector AddrSel>
constexpr auto use(const CircularBuffer& cb) {
    return CircularBufferView<AddrSel>(cb);
}

namespace ttsim::detail {
// Offsets into a circular buffer as a Noc endpoint, with a multicast rectangle for mcast destinations.
struct CircularBufferNocArgs {
    struct src_args_type {
        uint32_t offset_bytes{};
    };
    struct dst_args_type {
        uint32_t offset_bytes{};
    };
    struct dst_args_mcast_type {
        uint32_t noc_x_start{};
        uint32_t noc_y_start{};
        uint32_t noc_x_end{};
        uint32_t noc_y_end{};
        uint32_t offset_bytes{};
    };
    static uint64_t mcast_addr(uint32_t local_addr, const Noc& noc, const dst_args_mcast_type& a) {
        return ::get_noc_multicast_addr(a.noc_x_start, a.noc_y_start, a.noc_x_end, a.noc_y_end,
                                        local_addr + a.offset_bytes, noc.get_noc_id());
    }
};
}  // namespace ttsim::detail

template <>
struct noc_traits_t<CircularBuffer> : ttsim::detail::CircularBufferNocArgs {
    template <Noc::AddressType address_type>
    static auto src_addr(const CircularBuffer& src, const Noc&, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1,
                      "CircularBuffer without mcast range can only be used as L1 source");
        return src.get_read_ptr() + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static auto dst_addr(const CircularBuffer& dst, const Noc&, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1,
                      "CircularBuffer without mcast range can only be used as L1 destination");
        return dst.get_write_ptr() + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static auto dst_addr_mcast(const CircularBuffer& dst, const Noc& noc, const dst_args_mcast_type& args) {
        static_assert(address_type == Noc::AddressType::NOC,
                      "CircularBuffer with mcast range cannot be used as L1 destination");
        return mcast_addr(dst.get_write_ptr(), noc, args);
    }
};

template <CircularBuffer::AddrSelector AddrSel>
struct noc_traits_t<CircularBufferView<AddrSel>> : ttsim::detail::CircularBufferNocArgs {
    template <Noc::AddressType address_type>
    static auto src_addr(const CircularBufferView<AddrSel>& view, const Noc&, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1,
                      "CircularBuffer without mcast range can only be used as L1 source");
        return local_addr(view) + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static auto dst_addr(const CircularBufferView<AddrSel>& view, const Noc&, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1,
                      "CircularBuffer without mcast range can only be used as L1 destination");
        return local_addr(view) + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static auto dst_addr_mcast(const CircularBufferView<AddrSel>& view, const Noc& noc,
                               const dst_args_mcast_type& args) {
        static_assert(address_type == Noc::AddressType::NOC,
                      "CircularBuffer with mcast range cannot be used as L1 destination");
        return mcast_addr(local_addr(view), noc, args);
    }

private:
    // The view's pointer; the traits' own helper, not something a kernel calls.
    static uint32_t local_addr(const CircularBufferView<AddrSel>& view) {
        if constexpr (AddrSel == CircularBuffer::AddrSelector::READ_PTR) {
            return view.cb.get_read_ptr();
        } else {
            return view.cb.get_write_ptr();
        }
    }
};

template <>
inline constexpr bool noc_zero_l1_endpoint_v<CircularBuffer> = true;
#endif  // !COMPILE_FOR_TRISC

// As on the device, a data-movement kernel that has this endpoint also has the TensorAccessor one.
#if !defined(COMPILE_FOR_TRISC)
#include "api/tensor/noc_traits.h"
#endif
