// How a TensorAccessor takes part in a Noc transfer (api/tensor/noc_traits.h): a page of the tensor,
// plus a byte offset into it, as a source or a destination. The simulator's tensors live in DRAM, so
// an accessor is always a remote (NoC) endpoint.
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/dataflow/noc.h"
#include "api/tensor/tensor_accessor.h"

template <typename DSpecT>
struct noc_traits_t<TensorAccessor<DSpecT>> {
    struct src_args_type {
        uint32_t page_id{};
        uint32_t offset_bytes = 0;
    };
    struct dst_args_type {
        uint32_t page_id{};
        uint32_t offset_bytes = 0;
    };
    template <Noc::AddressType address_type>
    static auto src_addr(const TensorAccessor<DSpecT>& src, const Noc& noc, const src_args_type& args)
        -> std::conditional_t<address_type == Noc::AddressType::LOCAL_L1, uint32_t, uint64_t> {
        static_assert(address_type == Noc::AddressType::NOC, "the simulator's tensors are in DRAM, never local L1");
        return src.get_noc_addr(args.page_id, args.offset_bytes, noc.get_noc_id());
    }
    template <Noc::AddressType address_type>
    static auto dst_addr(const TensorAccessor<DSpecT>& dst, const Noc& noc, const dst_args_type& args)
        -> std::conditional_t<address_type == Noc::AddressType::LOCAL_L1, uint32_t, uint64_t> {
        static_assert(address_type == Noc::AddressType::NOC, "the simulator's tensors are in DRAM, never local L1");
        return dst.get_noc_addr(args.page_id, args.offset_bytes, noc.get_noc_id());
    }
};

// A page an accessor's iterator yields, plus a byte offset into it. As in tt-metal, the traits of an
// iterator's page come from a shared base in an implementation namespace (the page type is its
// parameter), so the specialisation itself declares nothing of its own.
namespace ttsim::detail {
template <typename PageT>
struct IteratorPageNocTraits {
    struct src_args_type {
        uint32_t offset_bytes = 0;
    };
    struct dst_args_type {
        uint32_t offset_bytes = 0;
    };
    template <Noc::AddressType address_type>
    static uint64_t src_addr(const PageT& src, const Noc& noc, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::NOC, "the simulator's tensors are in DRAM, never local L1");
        return src.accessor().get_noc_addr(src.page_id(), args.offset_bytes, noc.get_noc_id());
    }
    template <Noc::AddressType address_type>
    static uint64_t dst_addr(const PageT& dst, const Noc& noc, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::NOC, "the simulator's tensors are in DRAM, never local L1");
        return dst.accessor().get_noc_addr(dst.page_id(), args.offset_bytes, noc.get_noc_id());
    }
};
}  // namespace ttsim::detail

template <typename Accessor>
struct noc_traits_t<tensor_accessor::AccessorPage<Accessor>>
    : ttsim::detail::IteratorPageNocTraits<tensor_accessor::AccessorPage<Accessor>> {};

// Endpoints that address a page through something that resolves page ids: a type-erased accessor or a
// PageView (a page id and a byte offset), and a ShardView (a shard id; sharded tensors only).
namespace ttsim::detail {
template <typename Endpoint, typename IdArgs, typename Resolve>
struct ByIdNocTraits {
    using src_args_type = IdArgs;
    using dst_args_type = IdArgs;
    template <Noc::AddressType address_type>
    static uint64_t src_addr(const Endpoint& src, const Noc& noc, const IdArgs& args) {
        static_assert(address_type == Noc::AddressType::NOC, "the simulator's tensors are in DRAM, never local L1");
        return Resolve::addr(src, args, noc.get_noc_id());
    }
    template <Noc::AddressType address_type>
    static uint64_t dst_addr(const Endpoint& dst, const Noc& noc, const IdArgs& args) {
        static_assert(address_type == Noc::AddressType::NOC, "the simulator's tensors are in DRAM, never local L1");
        return Resolve::addr(dst, args, noc.get_noc_id());
    }
};
struct PageIdArgs {
    uint32_t page_id{};
    uint32_t offset_bytes = 0;
};
struct ShardIdArgs {
    uint32_t shard_id{};
    uint32_t offset_bytes = 0;
};
struct ResolvePage {
    template <typename E>
    static uint64_t addr(const E& e, const PageIdArgs& a, uint8_t noc) { return e.get_noc_addr(a.page_id, a.offset_bytes, noc); }
};
struct ResolveShard {
    template <typename E>
    static uint64_t addr(const E& e, const ShardIdArgs& a, uint8_t noc) { return e.get_noc_addr(a.shard_id, a.offset_bytes, noc); }
};
}  // namespace ttsim::detail

template <>
struct noc_traits_t<AbstractTensorAccessorWrapper>
    : ttsim::detail::ByIdNocTraits<AbstractTensorAccessorWrapper, ttsim::detail::PageIdArgs, ttsim::detail::ResolvePage> {};
template <typename Accessor>
struct noc_traits_t<PageView<Accessor>>
    : ttsim::detail::ByIdNocTraits<PageView<Accessor>, ttsim::detail::PageIdArgs, ttsim::detail::ResolvePage> {};
template <typename Accessor>
struct noc_traits_t<ShardView<Accessor>>
    : ttsim::detail::ByIdNocTraits<ShardView<Accessor>, ttsim::detail::ShardIdArgs, ttsim::detail::ResolveShard> {};
