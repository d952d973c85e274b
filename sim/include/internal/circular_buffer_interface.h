// tt-metal's per-kernel view of a circular buffer (LocalCBInterface, get_local_cb_interface).
//
// On the device this is a struct in the kernel's memory that the CB calls update. The simulator keeps
// a circular buffer's state itself (page counts, not pointers), so each field here is a handle that
// asks the simulator for the current value when read. Copying a field (`auto n = iface.fifo_rd_ptr;`)
// takes the value at that moment, as copying the device struct's field would. Kernels that move the
// fifo pointers by hand (assigning fifo_rd_ptr / fifo_wr_ptr) stop the run: the simulator derives the
// pointers from the pages pushed and popped and cannot honour a pointer it did not compute.
#pragma once

#include <cstdint>
#include <utility>

#include "ttsim/common.h"

#ifndef NUM_CIRCULAR_BUFFERS
#define NUM_CIRCULAR_BUFFERS 32
#endif
#ifndef CIRCULAR_BUFFER_COMPUTE_ADDR_SHIFT
#define CIRCULAR_BUFFER_COMPUTE_ADDR_SHIFT 4
#endif

// The compute (TRISC) side of tt-metal keeps fifo addresses and sizes in 16-byte units.
#if defined(COMPILE_FOR_TRISC)
constexpr uint32_t cb_addr_shift = CIRCULAR_BUFFER_COMPUTE_ADDR_SHIFT;
#else
constexpr uint32_t cb_addr_shift = 0;
#endif

namespace ttsim::detail {

enum class CbField : uint8_t { Size, Limit, PageSize, NumPages, RdPtr, WrPtr, TilesAcked, TilesReceived, WrTilePtr };

inline uint32_t read_cb_field(uint32_t cb, CbField f) {
    const int id = int(cb);
    switch (f) {
        case CbField::Size: return (TTSIM->cb_page_size(id) * TTSIM->cb_fifo(id, CbFifo::NumPages)) >> cb_addr_shift;
        case CbField::Limit:
            return (TTSIM->cb_fifo(id, CbFifo::Base) + TTSIM->cb_page_size(id) * TTSIM->cb_fifo(id, CbFifo::NumPages)) >>
                   cb_addr_shift;
        case CbField::PageSize: return TTSIM->cb_page_size(id) >> cb_addr_shift;
        case CbField::NumPages: return TTSIM->cb_fifo(id, CbFifo::NumPages);
        case CbField::RdPtr: return TTSIM->cb_read_ptr(id) >> cb_addr_shift;
        case CbField::WrPtr: return TTSIM->cb_write_ptr(id) >> cb_addr_shift;
        // The device's received/acked counters are 16-bit and wrap.
        case CbField::TilesAcked: return TTSIM->cb_fifo(id, CbFifo::PagesPopped) & 0xFFFFu;
        case CbField::TilesReceived: return TTSIM->cb_fifo(id, CbFifo::PagesPushed) & 0xFFFFu;
        case CbField::WrTilePtr:
            TTSIM->fail("get_local_cb_interface", "fifo_wr_tile_ptr is not modeled by the simulator: the packer's "
                                                  "tile cursor lives inside the simulator");
            return 0;
    }
    return 0;
}

class CbFieldRef {
public:
    constexpr CbFieldRef(uint32_t cb, CbField f) : cb_(cb), field_(f) {}
    CbFieldRef(const CbFieldRef& other) : cb_(other.cb_), field_(other.field_), held_(true), value_(uint32_t(other)) {}

    operator uint32_t() const { return held_ ? value_ : read_cb_field(cb_, field_); }

    CbFieldRef& operator=(uint32_t) { return refuse(); }
    CbFieldRef& operator=(const CbFieldRef&) { return refuse(); }
    CbFieldRef& operator+=(uint32_t) { return refuse(); }
    CbFieldRef& operator-=(uint32_t) { return refuse(); }

private:
    CbFieldRef& refuse() {
        TTSIM->fail("get_local_cb_interface", "writing a LocalCBInterface field is not modeled by the simulator: it "
                                              "derives the fifo pointers from the pages pushed and popped");
        return *this;
    }
    uint32_t cb_;
    CbField field_;
    bool held_ = false;
    uint32_t value_ = 0;
};

}  // namespace ttsim::detail

struct LocalCBInterface {
    explicit constexpr LocalCBInterface(uint32_t cb) :
        fifo_size(cb, ttsim::detail::CbField::Size),
        fifo_limit(cb, ttsim::detail::CbField::Limit),
        fifo_page_size(cb, ttsim::detail::CbField::PageSize),
        fifo_num_pages(cb, ttsim::detail::CbField::NumPages),
        fifo_rd_ptr(cb, ttsim::detail::CbField::RdPtr),
        fifo_wr_ptr(cb, ttsim::detail::CbField::WrPtr),
        tiles_acked(cb, ttsim::detail::CbField::TilesAcked),
        tiles_received(cb, ttsim::detail::CbField::TilesReceived),
        fifo_wr_tile_ptr(cb, ttsim::detail::CbField::WrTilePtr) {}
    LocalCBInterface(const LocalCBInterface&) = delete;
    LocalCBInterface& operator=(const LocalCBInterface&) = delete;

    ttsim::detail::CbFieldRef fifo_size;
    ttsim::detail::CbFieldRef fifo_limit;  // one past the last byte, as on the device
    ttsim::detail::CbFieldRef fifo_page_size;
    ttsim::detail::CbFieldRef fifo_num_pages;
    ttsim::detail::CbFieldRef fifo_rd_ptr;
    ttsim::detail::CbFieldRef fifo_wr_ptr;
    ttsim::detail::CbFieldRef tiles_acked;
    ttsim::detail::CbFieldRef tiles_received;
    ttsim::detail::CbFieldRef fifo_wr_tile_ptr;
};

namespace ttsim::detail {
template <uint32_t... Ids>
struct CbInterfaceTable {
    static inline LocalCBInterface entries[sizeof...(Ids)] = {LocalCBInterface(Ids)...};
};
template <uint32_t... Ids>
CbInterfaceTable<Ids...> make_cb_interface_table(std::integer_sequence<uint32_t, Ids...>);
using CbInterfaces = decltype(make_cb_interface_table(std::make_integer_sequence<uint32_t, NUM_CIRCULAR_BUFFERS>{}));
}  // namespace ttsim::detail

// The handles hold only the CB index, so one table serves every core that runs this kernel.
inline LocalCBInterface& get_local_cb_interface(uint32_t cb_id) {
    if (cb_id >= NUM_CIRCULAR_BUFFERS) {
        TTSIM->fail("get_local_cb_interface", "circular buffer index out of range 0..31");
    }
    return ttsim::detail::CbInterfaces::entries[cb_id];
}
