// Addressable Noc endpoints (api/dataflow/endpoints.h): a core's L1 by NoC coordinates, a ready-made
// 64-bit NoC address, a multicast rectangle, and a bank of the allocator (by bank id). They name where
// a transfer goes; the transfer itself is Noc::async_read / async_write / async_write_multicast.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"

struct UnicastEndpoint {
    uint64_t get_noc_unicast_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc) const {
        return ::get_noc_addr(noc_x, noc_y, addr, noc);
    }
};

struct PrecomposedUnicastEndpoint {};

template <>
struct noc_traits_t<PrecomposedUnicastEndpoint> {
    struct src_args_type {
        uint64_t noc_addr{};
    };
    struct dst_args_type {
        uint64_t noc_addr{};
    };
    template <Noc::AddressType address_type>
    static auto src_addr(const PrecomposedUnicastEndpoint&, const Noc&, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::NOC);
        return args.noc_addr;
    }
    template <Noc::AddressType address_type>
    static auto dst_addr(const PrecomposedUnicastEndpoint&, const Noc&, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::NOC);
        return args.noc_addr;
    }
};

struct MulticastEndpoint {
    uint64_t get_noc_multicast_addr(uint32_t noc_x_start, uint32_t noc_y_start, uint32_t noc_x_end,
                                    uint32_t noc_y_end, uint32_t addr, uint8_t noc) const {
        return ::get_noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr, noc);
    }
};

enum class AllocatorBankType { L1, DRAM };

template <AllocatorBankType bank_type>
struct AllocatorBank {
    uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t addr, uint8_t noc) const {
        return ::get_noc_addr_from_bank_id<bank_type == AllocatorBankType::DRAM>(bank_id, addr, noc);
    }
};

// As a source, a unicast endpoint on this core may be read as local L1 (its address as it is).
template <>
struct noc_traits_t<UnicastEndpoint> {
    struct src_args_type {
        uint32_t noc_x{};
        uint32_t noc_y{};
        uint32_t addr{};
    };
    struct dst_args_type {
        uint32_t noc_x{};
        uint32_t noc_y{};
        uint32_t addr{};
    };
    template <Noc::AddressType address_type>
    static auto src_addr(const UnicastEndpoint& src, const Noc& noc, const src_args_type& args) {
        if constexpr (address_type == Noc::AddressType::LOCAL_L1) {
            return uint64_t(args.addr);
        } else {
            return src.get_noc_unicast_addr(args.noc_x, args.noc_y, Noc::l1_cached_view(args.addr), noc.get_noc_id());
        }
    }
    template <Noc::AddressType address_type>
    static auto dst_addr(const UnicastEndpoint& dst, const Noc& noc, const dst_args_type& args) {
        if constexpr (address_type == Noc::AddressType::LOCAL_L1) {
            return uint64_t(args.addr);
        } else {
            return dst.get_noc_unicast_addr(args.noc_x, args.noc_y, Noc::l1_cached_view(args.addr), noc.get_noc_id());
        }
    }
};

template <>
struct noc_traits_t<MulticastEndpoint> {
    struct dst_args_mcast_type {
        uint32_t noc_x_start{};
        uint32_t noc_y_start{};
        uint32_t noc_x_end{};
        uint32_t noc_y_end{};
        uint32_t addr{};
    };
    template <Noc::AddressType address_type>
    static auto dst_addr_mcast(const MulticastEndpoint& dst, const Noc& noc, const dst_args_mcast_type& args) {
        static_assert(address_type == Noc::AddressType::NOC);
        return dst.get_noc_multicast_addr(args.noc_x_start, args.noc_y_start, args.noc_x_end, args.noc_y_end,
                                          Noc::l1_cached_view(args.addr), noc.get_noc_id());
    }
};

template <AllocatorBankType bank_type>
struct noc_traits_t<AllocatorBank<bank_type>> {
    struct src_args_type {
        uint32_t bank_id{};
        uint32_t addr{};
    };
    struct dst_args_type {
        uint32_t bank_id{};
        uint32_t addr{};
    };
    template <Noc::AddressType address_type>
    static auto src_addr(const AllocatorBank<bank_type>& src, const Noc& noc, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::NOC);
        return src.get_noc_addr_from_bank_id(args.bank_id, args.addr, noc.get_noc_id());
    }
    template <Noc::AddressType address_type>
    static auto dst_addr(const AllocatorBank<bank_type>& dst, const Noc& noc, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::NOC);
        return dst.get_noc_addr_from_bank_id(args.bank_id, args.addr, noc.get_noc_id());
    }
};
