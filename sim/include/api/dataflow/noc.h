// The object form of the data-movement API (api/dataflow/noc.h in TT-Metalium): a Noc issues reads,
// writes and multicasts between endpoints (a TensorAccessor page, a DataflowBuffer, a CoreLocalMem, a
// unicast/multicast core address, ...). What an endpoint means as a source or destination is told by
// its noc_traits_t specialisation, next to the endpoint type, exactly as in tt-metal; the transfers
// then go through the same simulator calls as noc_async_read / noc_async_write, so they share their
// checks and modeled cost.
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dfb_access.h"
#include "api/debug/assert.h"

#ifndef MEM_ZEROS_SIZE
#define MEM_ZEROS_SIZE 512  // Wormhole's always-zero L1 region, the source of async_write_zeros
#endif
#include "noc_parameters.h"  // the NoC alignments

template <typename DSpecT>
struct TensorAccessor;

struct UnicastEndpoint;
struct MulticastEndpoint;
class CircularBuffer;

// Offsets into a DataflowBuffer's current page, for the DataflowBuffer overloads.
struct DataflowBufferArgs {
    uint32_t offset_bytes{};
};

template <typename T>
struct noc_traits_t {
    static_assert(sizeof(T) == 0, "NoC transactions are not supported for this type");
};

template <>
struct noc_traits_t<UnicastEndpoint>;
template <>
struct noc_traits_t<MulticastEndpoint>;

template <typename T>
inline constexpr bool noc_zero_l1_endpoint_v = false;

template <typename T>
inline constexpr bool is_scratchpad_v = false;

#define NOC_TRANSFER_INLINE

namespace ttsim::detail {
// The simulator's NoC address layout (sim/src/device.h): the L1 offset or DRAM address in the low 36
// bits, then x and y in 6 bits each.
constexpr int kNocCoordShift = 36;
inline uint32_t noc_x_of(uint64_t noc_addr) { return uint32_t((noc_addr >> kNocCoordShift) & 0x3f); }
inline uint32_t noc_y_of(uint64_t noc_addr) { return uint32_t((noc_addr >> (kNocCoordShift + 6)) & 0x3f); }
}  // namespace ttsim::detail

enum class NocOptions : uint32_t {
    DEFAULT = 0,
    TXN_ID = 1u << 0,
    POSTED = 1u << 1,
    CUSTOM_VC = 1u << 2,
    MCAST_INCL_SRC = 1u << 3,
    INLINE_L1 = 1u << 4,
    INLINE_REG = 1u << 5,
};

constexpr NocOptions operator|(NocOptions a, NocOptions b) noexcept {
    return static_cast<NocOptions>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}

constexpr bool has_flag(NocOptions opts, NocOptions flag) noexcept {
    return (static_cast<uint32_t>(opts) & static_cast<uint32_t>(flag)) != 0;
}

struct NocOptVals {
    uint32_t vc = NOC_UNICAST_WRITE_VC;
    uint32_t trid = 0;
};

// Virtual channels, transaction ids and posted writes change how the device orders and acknowledges
// packets, not what lands where. The simulator completes every transfer in issue order and tracks one
// outstanding-read and one outstanding-write time per kernel, so a barrier on one transaction id waits
// for all of this kernel's transfers (never less than the device would wait).
class Noc {
public:
    enum class AddressType { NOC, LOCAL_L1 };

    static constexpr uint32_t INVALID_TXN_ID = 0xFFFFFFFF;

private:
    template <typename T>
    using src_args_t = typename noc_traits_t<T>::src_args_type;
    template <typename T>
    using dst_args_t = typename noc_traits_t<T>::dst_args_type;
    template <typename T>
    using dst_args_mcast_t = typename noc_traits_t<T>::dst_args_mcast_type;

    // L1 has a single (cached) view on Wormhole: an address is its own NoC-usable address.
    static uint32_t l1_cached_view(uint32_t addr) { return addr; }

    friend struct noc_traits_t<UnicastEndpoint>;
    friend struct noc_traits_t<MulticastEndpoint>;

    template <AddressType address_type, typename Src>
    auto src_address(const Src& src, const src_args_t<Src>& args) const {
        auto a = noc_traits_t<Src>::template src_addr<address_type>(src, *this, args);
        if constexpr (address_type == AddressType::LOCAL_L1) {
            return static_cast<uint32_t>(a);
        } else {
            return static_cast<uint64_t>(a);
        }
    }
    template <AddressType address_type, typename Dst>
    auto dst_address(const Dst& dst, const dst_args_t<Dst>& args) const {
        auto a = noc_traits_t<Dst>::template dst_addr<address_type>(dst, *this, args);
        if constexpr (address_type == AddressType::LOCAL_L1) {
            return static_cast<uint32_t>(a);
        } else {
            return static_cast<uint64_t>(a);
        }
    }

public:
    Noc() : noc_id_(noc_index) {}
    explicit Noc(uint8_t noc_id) : noc_id_(noc_id) {}

    uint8_t get_noc_id() const { return noc_id_; }

    bool is_local_bank(uint32_t virtual_x, uint32_t virtual_y) const {
        return virtual_x == TTSIM->my_noc_x() && virtual_y == TTSIM->my_noc_y();
    }

    bool is_local_addr(const uint64_t noc_addr) const {
        return ttsim::detail::noc_x_of(noc_addr) == TTSIM->my_noc_x() &&
               ttsim::detail::noc_y_of(noc_addr) == TTSIM->my_noc_y();
    }

    template <
        NocOptions opts = NocOptions::DEFAULT,
        uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
        bool enable_noc_tracing = true,
        typename Src,
        typename Dst>
    NOC_TRANSFER_INLINE void async_read(
        const Src& src,
        const Dst& dst,
        uint32_t size_bytes,
        const src_args_t<Src>& src_args,
        const dst_args_t<Dst>& dst_args,
        const NocOptVals& noc_opts = {}) const {
        (void)noc_opts;
        const uint32_t dst_addr = dst_address<AddressType::LOCAL_L1>(dst, dst_args);
        const uint64_t src_addr = src_address<AddressType::NOC>(src, src_args);
        noc_async_read<max_page_size, enable_noc_tracing>(src_addr, dst_addr, size_bytes, noc_id_);
    }

    // The stateful forms keep the NoC coordinates in the command buffer so each later transfer only
    // sends the local part of the address; the API requires the later sources to sit at the same NoC
    // location, so the simulator issues each transfer with its full address (same bytes, same cost
    // model as an ordinary read).
    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, typename Src>
    void set_async_read_state(
        const Src& src, uint32_t size_bytes, const src_args_t<Src>& src_args, const NocOptVals& noc_opts = {}) const {
        (void)src;
        (void)size_bytes;
        (void)src_args;
        (void)noc_opts;
    }

    template <
        NocOptions opts = NocOptions::DEFAULT,
        uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
        typename Src,
        typename Dst>
    void async_read_with_state(
        const Src& src,
        const Dst& dst,
        uint32_t size_bytes,
        const src_args_t<Src>& src_args,
        const dst_args_t<Dst>& dst_args,
        const NocOptVals& noc_opts = {}) const {
        async_read<opts, max_page_size>(src, dst, size_bytes, src_args, dst_args, noc_opts);
    }

    template <
        NocOptions opts = NocOptions::DEFAULT,
        uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
        bool enable_noc_tracing = true,
        typename Src,
        typename Dst>
    NOC_TRANSFER_INLINE void async_write(
        const Src& src,
        const Dst& dst,
        uint32_t size_bytes,
        const src_args_t<Src>& src_args,
        const dst_args_t<Dst>& dst_args,
        const NocOptVals& noc_opts = {}) const {
        (void)noc_opts;
        const uint32_t src_addr = src_address<AddressType::LOCAL_L1>(src, src_args);
        const uint64_t dst_addr = dst_address<AddressType::NOC>(dst, dst_args);
        noc_async_write<max_page_size, enable_noc_tracing, has_flag(opts, NocOptions::POSTED)>(
            src_addr, dst_addr, size_bytes, noc_id_);
    }

    template <
        NocOptions opts = NocOptions::DEFAULT,
        uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
        bool enable_noc_tracing = true,
        typename Src,
        typename Dst>
    void async_write_multicast(
        const Src& src,
        const Dst& dst,
        uint32_t size_bytes,
        uint32_t num_dsts,
        const src_args_t<Src>& src_args,
        const dst_args_mcast_t<Dst>& dst_args,
        bool linked = false) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID), "Mcasts with transaction id are not supported yet");
        static_assert(!has_flag(opts, NocOptions::POSTED), "Mcasts with posted transactions are not supported");
        const uint32_t src_addr = src_address<AddressType::LOCAL_L1>(src, src_args);
        const uint64_t dst_addr = noc_traits_t<Dst>::template dst_addr_mcast<AddressType::NOC>(dst, *this, dst_args);
        if constexpr (has_flag(opts, NocOptions::MCAST_INCL_SRC)) {
            noc_async_write_multicast_loopback_src(src_addr, dst_addr, size_bytes, num_dsts, linked, noc_id_);
        } else {
            noc_async_write_multicast<max_page_size>(src_addr, dst_addr, size_bytes, num_dsts, linked, noc_id_);
        }
    }

    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, typename Dst>
    void set_async_write_state(
        const Dst& dst, uint32_t size_bytes, const dst_args_t<Dst>& dst_args, const NocOptVals& noc_opts = {}) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID), "NocOptions::TXN_ID is not supported for set_async_write_state");
        (void)dst;
        (void)size_bytes;
        (void)dst_args;
        (void)noc_opts;
    }

    template <
        NocOptions opts = NocOptions::DEFAULT,
        uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
        typename Src,
        typename Dst>
    void async_write_with_state(
        const Src& src,
        const Dst& dst,
        uint32_t size_bytes,
        const src_args_t<Src>& src_args,
        const dst_args_t<Dst>& dst_args,
        const NocOptVals& noc_opts = {}) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID), "NocOptions::TXN_ID is not supported for async_write_with_state");
        async_write<opts, max_page_size>(src, dst, size_bytes, src_args, dst_args, noc_opts);
    }

    template <NocOptions opts = NocOptions::DEFAULT, typename Dst>
    void inline_dw_write(
        const Dst& dst, uint32_t val, const dst_args_t<Dst>& dst_args, uint8_t be = 0xF,
        const NocOptVals& noc_opts = {}) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID), "TxnId is not supported for inline_dw_write");
        static_assert(!(has_flag(opts, NocOptions::INLINE_L1) && has_flag(opts, NocOptions::INLINE_REG)),
                      "INLINE_L1 and INLINE_REG are mutually exclusive in inline_dw_write");
        static_assert(!std::is_same_v<Dst, MulticastEndpoint>);
        (void)noc_opts;
        constexpr auto dst_type = has_flag(opts, NocOptions::INLINE_REG) ? InlineWriteDst::REG
                                  : has_flag(opts, NocOptions::INLINE_L1) ? InlineWriteDst::L1
                                                                          : InlineWriteDst::DEFAULT;
        noc_inline_dw_write<dst_type, has_flag(opts, NocOptions::POSTED)>(
            dst_address<AddressType::NOC>(dst, dst_args), val, be, noc_id_);
    }

    bool is_read_trid_flushed(uint32_t trid) const {
        (void)trid;
        TTSIM->fail("Noc::is_read_trid_flushed",
                    "not modeled by the simulator: it tracks outstanding reads per kernel, not per transaction id");
        return false;
    }

    template <NocOptions opts = NocOptions::DEFAULT>
    void async_read_barrier(const NocOptVals& noc_opts = {}) const {
        (void)noc_opts;
        noc_async_read_barrier(noc_id_);
    }

    template <NocOptions opts = NocOptions::DEFAULT>
    void async_write_barrier(const NocOptVals& noc_opts = {}) const {
        (void)noc_opts;
        noc_async_write_barrier(noc_id_);
    }

    template <NocOptions opts = NocOptions::DEFAULT>
    void async_writes_flushed(const NocOptVals& noc_opts = {}) const {
        (void)noc_opts;
        if constexpr (has_flag(opts, NocOptions::POSTED)) {
            static_assert(!has_flag(opts, NocOptions::TXN_ID), "Posted writes flushed does not support TXN_ID");
            noc_async_posted_writes_flushed(noc_id_);
        } else {
            noc_async_writes_flushed(noc_id_);
        }
    }

    void async_atomic_barrier() const { noc_async_atomic_barrier(noc_id_); }

    void async_full_barrier() const { noc_async_full_barrier(noc_id_); }

    // Zero-fills a local L1 endpoint with NoC reads of this core's zero region (MEM_ZEROS_SIZE bytes per
    // read); complete after write_zeros_l1_barrier (a read barrier), as on the device.
    template <typename Dst>
    void async_write_zeros(const Dst& dst, uint32_t size_bytes, const dst_args_t<Dst>& args = {}) const {
        static_assert(noc_zero_l1_endpoint_v<Dst>,
                      "noc.async_write_zeros: unsupported local-L1 destination. Supported: CircularBuffer, "
                      "DataflowBuffer, CoreLocalMem, Scratchpad. Use the TensorAccessor overload for DRAM.");
        if constexpr (is_scratchpad_v<Dst>) {
            ASSERT(uint64_t(args.offset_bytes) + size_bytes <= dst.size_in_bytes());
        }
        const uint32_t addr = dst_address<AddressType::LOCAL_L1>(dst, args);
        ASSERT(addr % NOC_L1_READ_ALIGNMENT_BYTES == 0);
        TTSIM->noc_read_zeros(addr, size_bytes, MEM_ZEROS_SIZE);
    }

    // Writes zeros into a DRAM page from a local scratch endpoint that already holds zeros (zero it first
    // with the overload above), one NoC write per packet; complete after write_zeros_dram_barrier.
    template <typename DSpecT, typename Scratch>
    void async_write_zeros(
        const ::TensorAccessor<DSpecT>& accessor,
        uint32_t size_bytes,
        const dst_args_t<::TensorAccessor<DSpecT>>& args,
        const Scratch& scratch) const {
        static_assert(DSpecT::is_dram, "noc.async_write_zeros<TensorAccessor, Scratch> requires a DRAM-backed accessor.");
        static_assert(noc_zero_l1_endpoint_v<Scratch>,
                      "noc.async_write_zeros scratch must be a local-L1 endpoint: CircularBuffer, DataflowBuffer, "
                      "CoreLocalMem or Scratchpad.");
        ASSERT(args.offset_bytes + size_bytes <= accessor.get_aligned_page_size());
        const uint32_t max_chunk = size_bytes > uint32_t(NOC_MAX_BURST_SIZE) ? uint32_t(NOC_MAX_BURST_SIZE) : size_bytes;
        if constexpr (is_dataflow_buffer_v<Scratch>) {
            ASSERT(scratch.get_entry_size() >= max_chunk);
        } else if constexpr (is_scratchpad_v<Scratch>) {
            ASSERT(scratch.size_in_bytes() >= max_chunk);
        }
        const uint32_t src = src_address<AddressType::LOCAL_L1>(scratch, src_args_t<Scratch>{});
        uint64_t dst = accessor.get_noc_addr(args.page_id, args.offset_bytes, noc_id_);
        for (uint32_t left = size_bytes; left > 0;) {
            const uint32_t n = left > max_chunk ? max_chunk : left;
            noc_async_write(src, dst, n, noc_id_);
            dst += n;
            left -= n;
        }
    }

    void write_zeros_l1_barrier() const { noc_async_read_barrier(noc_id_); }

    void write_zeros_dram_barrier() const { noc_async_write_barrier(noc_id_); }

private:
    uint8_t noc_id_;
};
