// DataflowBuffer (api/dataflow/dataflow_buffer.h): the object form of a circular buffer, used by
// data-movement and compute kernels alike. On Wormhole it wraps one local circular buffer; every call
// is the simulator's circular-buffer call of the same name, so it carries the same checks and modeled
// cost (in a compute kernel, reserve/push on the packer's clock and wait/pop on the unpacker's).
//
// As on the device, the compute side sees fifo addresses in 16-byte units (cb_addr_shift) and the
// data-movement side in bytes.
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/core_local_mem.h"
#include "api/dataflow/dfb_access.h"
#include "api/dataflow/dfb_binding_token.h"
#include "api/debug/assert.h"
#include "api/debug/waypoint.h"
#include "api/lock.h"
#include "chlkc_descriptors.h"
#include "internal/circular_buffer_interface.h"
#include "ttsim/common.h"

#ifndef COMPILE_FOR_TRISC
#include "api/dataflow/noc.h"
template <>
struct noc_traits_t<DataflowBuffer>;
#endif

template <bool IsWrite, typename ReleaseFunc>
class DfbScopedLock {
public:
    inline __attribute__((always_inline)) DfbScopedLock(uint32_t pointer, ReleaseFunc release) :
        pointer_(pointer), release_(release) {}
    inline __attribute__((always_inline)) ~DfbScopedLock() { release_(); }

    DfbScopedLock(const DfbScopedLock&) = delete;
    DfbScopedLock(DfbScopedLock&&) = delete;
    DfbScopedLock& operator=(const DfbScopedLock&) = delete;
    DfbScopedLock& operator=(DfbScopedLock&&) = delete;

    template <typename T = uint32_t>
    [[nodiscard]] inline __attribute__((always_inline)) CoreLocalMem<std::conditional_t<IsWrite, T, const T>> get_ptr()
        const {
        return CoreLocalMem<std::conditional_t<IsWrite, T, const T>>(pointer_);
    }

private:
    uint32_t pointer_;
    ReleaseFunc release_;
};

template <bool IsWrite, typename ReleaseFunc>
[[nodiscard]] inline __attribute__((always_inline)) DfbScopedLock<IsWrite, ReleaseFunc> make_dfb_scoped_lock(
    uint32_t pointer, ReleaseFunc release) {
    return DfbScopedLock<IsWrite, ReleaseFunc>(pointer, release);
}

#define DFB_IS_COMPUTE_MATH 0

class DataflowBuffer {
public:
    using DFBInterface = LocalCBInterface;

    template <dfb::AccessPattern TokPap, dfb::AccessPattern TokCap>
    DataflowBuffer(DFBBindingToken<TokPap, TokCap> token) : DataflowBuffer(static_cast<uint16_t>(token)) {}
    DataflowBuffer(RelayDFBBindingToken token) : DataflowBuffer(static_cast<uint16_t>(token)) {
        if (token.prefetcher_pipe_id() != RelayDFBBindingToken::NO_PREFETCHER_PIPE) {
            TTSIM->fail("DataflowBuffer", "not modeled by the simulator: relay buffers fed by a prefetcher pipe");
        }
    }
    DataflowBuffer(uint16_t logical_dfb_id) : logical_dfb_id_(logical_dfb_id) {}

    uint16_t get_id() const { return logical_dfb_id_; }

    uint32_t get_entry_size() const { return TTSIM->cb_page_size(logical_dfb_id_); }
    uint32_t get_stride_size() const { return TTSIM->cb_page_size(logical_dfb_id_); }
    // The tile shape tt-metal's JIT bakes into the kernel for this buffer (chlkc_descriptors.h).
    uint32_t get_tile_size() const { return unpack_tile_size[logical_dfb_id_]; }
    uint32_t get_tile_r_dim() const { return unpack_tile_r_dim[logical_dfb_id_]; }
    uint32_t get_tile_c_dim() const { return unpack_tile_c_dim[logical_dfb_id_]; }
    uint32_t get_tile_num_faces() const { return unpack_tile_num_faces[logical_dfb_id_]; }
    uint32_t get_tile_hw() const { return get_tile_r_dim() * get_tile_c_dim(); }
    uint32_t get_face_r_dim() const { return unpack_tile_face_r_dim[logical_dfb_id_]; }
    uint32_t get_partial_face() const { return unpack_partial_face[logical_dfb_id_]; }
    uint32_t get_narrow_tile() const { return unpack_narrow_tile[logical_dfb_id_]; }
    uint32_t get_num_faces_r_dim() const { return get_tile_r_dim() / get_face_r_dim(); }
    uint32_t get_num_faces_c_dim() const { return get_tile_num_faces() / get_num_faces_r_dim(); }
    DataFormat get_dataformat() const { return static_cast<DataFormat>(unpack_src_format[logical_dfb_id_]); }
    DataFormat get_unpack_dst_format() const { return static_cast<DataFormat>(unpack_dst_format[logical_dfb_id_]); }
    DataFormat get_pack_src_format() const { return static_cast<DataFormat>(pack_src_format[logical_dfb_id_]); }
    DataFormat get_pack_dst_format() const { return static_cast<DataFormat>(pack_dst_format[logical_dfb_id_]); }
    uint32_t get_total_num_entries() const { return TTSIM->cb_fifo(logical_dfb_id_, ttsim::CbFifo::NumPages); }
    uint32_t get_total_size_bytes() const { return get_entry_size() * get_total_num_entries(); }

    uint32_t get_local_num_entries() const { return get_total_num_entries(); }
    uint32_t get_local_size_bytes() const { return get_total_size_bytes(); }
    uint32_t get_ring_span_bytes() const { return get_total_size_bytes(); }
    uint32_t get_ring_span_num_entries() const { return get_total_num_entries(); }

    // One producer and one consumer per buffer on Wormhole.
    uint16_t get_producer_share() const { return 1; }
    uint16_t get_consumer_share() const { return 1; }
    uint16_t get_producer_stride_tiles() const { return 1; }
    uint16_t get_consumer_stride_tiles() const { return 1; }

    void reserve_back(uint16_t num_entries) { TTSIM->cb_reserve_back(logical_dfb_id_, num_entries); }
    void push_back(uint16_t num_entries) { TTSIM->cb_push_back(logical_dfb_id_, num_entries); }
    // Zero entries is a no-op on the device (the wait compares the fill with 0, the pop moves the read
    // pointer by 0): tt-metal's matmul writers wait and pop a padding count that is 0 when nothing is padded.
    void wait_front(uint16_t num_entries) {
        if (num_entries != 0) TTSIM->cb_wait_front(logical_dfb_id_, num_entries);
    }
    void pop_front(uint16_t num_entries) {
        if (num_entries != 0) TTSIM->cb_pop_front(logical_dfb_id_, num_entries);
    }

#ifndef COMPILE_FOR_TRISC
    bool pages_reservable_at_back(int32_t num_pages) const {
        return TTSIM->cb_pages_reservable(logical_dfb_id_, num_pages);
    }
    bool pages_available_at_front(int32_t num_pages) const {
        return TTSIM->cb_pages_available(logical_dfb_id_, num_pages);
    }
#endif

#ifdef COMPILE_FOR_TRISC
    // Byte address of a tile of the front block (the unpacker's view).
    uint32_t get_tile_address(uint32_t tile_index) {
        return TTSIM->cb_read_ptr(logical_dfb_id_) + TTSIM->cb_page_size(logical_dfb_id_) * tile_index;
    }

    template <typename T = uint32_t>
    T read_tile_value(uint32_t tile_index, uint32_t element_offset) {
        static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "read_tile_value: T must be 1, 2, or 4 bytes");
        static_assert(std::is_integral_v<T> && std::is_unsigned_v<T> && !std::is_same_v<T, bool>,
                      "read_tile_value: T must be an unsigned integral type");
        return reinterpret_cast<volatile T*>(uintptr_t(get_tile_address(tile_index)))[element_offset];
    }
#endif

    // Nothing is pending at the end of a Wormhole buffer's use.
    void finish() {}

#ifndef COMPILE_FOR_TRISC
    void write_barrier(const Noc& noc) const { noc.async_write_barrier(); }
#endif

    uint32_t get_write_ptr() const { return TTSIM->cb_write_ptr(logical_dfb_id_) >> cb_addr_shift; }
    uint32_t get_read_ptr() const { return TTSIM->cb_read_ptr(logical_dfb_id_) >> cb_addr_shift; }

    void evil_set_write_ptr(uint32_t addr) {
        (void)addr;
        TTSIM->fail("DataflowBuffer::evil_set_write_ptr", "not modeled by the simulator: it derives the fifo "
                                                         "pointers from the pages pushed and popped");
    }
    void evil_set_read_ptr(uint32_t addr) {
        (void)addr;
        TTSIM->fail("DataflowBuffer::evil_set_read_ptr", "not modeled by the simulator: it derives the fifo "
                                                        "pointers from the pages pushed and popped");
    }

    // On Wormhole a scoped lock hands out the current pointer and releases nothing (the device only
    // records profiler events); it neither reserves nor pushes pages.
    [[nodiscard]] auto scoped_write_lock(uint16_t num_entries = 1) {
        (void)num_entries;
        return make_dfb_scoped_lock<true>(TTSIM->cb_write_ptr(logical_dfb_id_), []() {});
    }
    [[nodiscard]] auto scoped_read_lock(uint16_t num_entries = 1) {
        (void)num_entries;
        return make_dfb_scoped_lock<false>(TTSIM->cb_read_ptr(logical_dfb_id_), []() {});
    }

private:
#ifndef COMPILE_FOR_TRISC
    friend struct noc_traits_t<DataflowBuffer>;
#endif
    uint32_t get_noc_write_addr() const { return TTSIM->cb_write_ptr(logical_dfb_id_); }
    uint32_t get_noc_read_addr() const { return TTSIM->cb_read_ptr(logical_dfb_id_); }

    uint16_t logical_dfb_id_;
};

#ifndef COMPILE_FOR_TRISC
template <>
struct noc_traits_t<DataflowBuffer> {
    using src_args_type = DataflowBufferArgs;
    using dst_args_type = DataflowBufferArgs;

    struct dst_args_mcast_type {
        uint32_t noc_x_start{};
        uint32_t noc_y_start{};
        uint32_t noc_x_end{};
        uint32_t noc_y_end{};
        uint32_t offset_bytes{};
    };
    // The front page is what a buffer sends; the back (reserved) page is where it receives.
    template <Noc::AddressType address_type>
    static auto src_addr(const DataflowBuffer& src, const Noc&, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1,
                      "DataflowBuffer without mcast range can only be used as L1 source");
        return src.get_noc_read_addr() + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static auto dst_addr(const DataflowBuffer& dst, const Noc&, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1,
                      "DataflowBuffer without mcast range can only be used as L1 destination");
        return dst.get_noc_write_addr() + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static auto dst_addr_mcast(const DataflowBuffer& dst, const Noc& noc, const dst_args_mcast_type& args) {
        static_assert(address_type == Noc::AddressType::NOC,
                      "DataflowBuffer with mcast range cannot be used as L1 destination");
        return ::get_noc_multicast_addr(args.noc_x_start, args.noc_y_start, args.noc_x_end, args.noc_y_end,
                                        dst.get_noc_write_addr() + args.offset_bytes, noc.get_noc_id());
    }
};

template <>
inline constexpr bool noc_zero_l1_endpoint_v<DataflowBuffer> = true;
#endif

// As on the device, a data-movement kernel that has this endpoint also has the TensorAccessor one.
#if !defined(COMPILE_FOR_TRISC)
#include "api/tensor/noc_traits.h"
#endif
