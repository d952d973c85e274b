// TensorAccessor for interleaved DRAM tensors: page i lives in bank i % 12 at
// bank_base + (i / 12) * aligned_page_size, which the simulator resolves to a NoC address.
//
// As in TT-Metalium, TensorAccessor is a class template (over its distribution spec; here the
// TensorAccessorArgs type), deduced from the args object: `const auto acc = TensorAccessor(args, addr, size);`.
// Helper functions that take an accessor must therefore be templates, exactly as on the device.
#pragma once

#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "api/tensor/tensor_accessor_args.h"
#include "api/tensor/pages_address_iterator.h"
#include "api/tensor/tensor_binding_token.h"
#include "ttsim/common.h"

template <typename DSpecT>
struct TensorAccessor {
    using DSpec = DSpecT;
    static constexpr bool is_dram = true;
    uint32_t bank_base_address = 0;
    uint32_t aligned_page_size = 0;

    template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET>
    TensorAccessor(
        const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>& args,
        const uint32_t bank_base_address_in,
        const uint32_t page_size_in = TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>::AlignedPageSize) :
        bank_base_address(bank_base_address_in), aligned_page_size(page_size_in) {
        (void)args;
    }

    // From a Metal 2.0 binding token: the address is the common runtime arg at ADDR_CRTA_OFFSET bytes,
    // and any runtime accessor fields follow it.
    template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
    TensorAccessor(tensor_accessor::TensorBindingToken<CTA_OFFSET, ADDR_CRTA_OFFSET>) :
        TensorAccessor(TensorAccessorArgs<CTA_OFFSET, ADDR_CRTA_OFFSET / sizeof(uint32_t) + 1>{},
                       TTSIM->common_arg(int(ADDR_CRTA_OFFSET / sizeof(uint32_t)))) {
        static_assert(ADDR_CRTA_OFFSET % sizeof(uint32_t) == 0, "TensorBindingToken: ADDR_CRTA_OFFSET must be 4-byte aligned");
    }

    std::uint64_t get_noc_addr(const uint32_t page_id, const uint32_t offset = 0, uint8_t noc = noc_index) const {
        (void)noc;
        if constexpr (DSpec::is_null) {
            TTSIM->fail("TensorAccessor", "read or write through the accessor of an absent tensor (its args are null)");
        }
        return TTSIM->dram_page_noc_addr(bank_base_address, page_id, aligned_page_size, offset);
    }
    uint32_t get_aligned_page_size() const { return aligned_page_size; }
    constexpr uint32_t get_bank_base_address() const { return bank_base_address; }

    // Whether a bank, a NoC address or a page is in this core's own memory: never, for the DRAM
    // tensors the simulator has.
    bool is_local_bank(uint32_t virtual_x, uint32_t virtual_y, uint8_t noc = noc_index) const {
        (void)noc;
        return virtual_x == TTSIM->my_noc_x() && virtual_y == TTSIM->my_noc_y();
    }
    bool is_local_addr(const uint64_t noc_addr, uint8_t noc = noc_index) const {
        (void)noc_addr;
        (void)noc;
        return false;
    }
    bool is_local_page(const uint32_t page_id, uint8_t noc = noc_index) const {
        (void)page_id;
        (void)noc;
        return false;
    }

    // Pages [start_page_id, end_page_id). The interleaved args carry no tensor shape, so the end must be
    // given (0, "to the end of the tensor", stops the run).
    tensor_accessor::Pages<TensorAccessor> pages(uint32_t start_page_id = 0, uint32_t end_page_id = 0,
                                                 uint8_t noc = noc_index) const {
        if (end_page_id == 0) {
            TTSIM->fail("TensorAccessor::pages", "not modeled by the simulator: iterating to the end of the tensor "
                                                 "(its interleaved accessor args carry no tensor shape)");
        }
        return tensor_accessor::Pages<TensorAccessor>(*this, start_page_id, end_page_id, 1, noc);
    }
    // Shards exist only for sharded tensors, which the simulator does not have.
    tensor_accessor::Pages<TensorAccessor> shard_pages(uint32_t shard_id, uint32_t start_page_offset = 0,
                                                       uint32_t end_page_offset = 0, uint8_t noc = noc_index) const {
        (void)shard_id;
        (void)end_page_offset;
        TTSIM->fail("TensorAccessor::shard_pages", "not modeled by the simulator: sharded tensors");
        return tensor_accessor::Pages<TensorAccessor>(*this, start_page_offset, start_page_offset, 1, noc);
    }
};

template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET>
TensorAccessor(const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>&, uint32_t)
    -> TensorAccessor<TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>>;
template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET>
TensorAccessor(const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>&, uint32_t, uint32_t)
    -> TensorAccessor<TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>>;

template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
TensorAccessor(tensor_accessor::TensorBindingToken<CTA_OFFSET, ADDR_CRTA_OFFSET>)
    -> TensorAccessor<TensorAccessorArgs<CTA_OFFSET, ADDR_CRTA_OFFSET / sizeof(uint32_t) + 1>>;

namespace ttsim::detail {
template <typename T>
struct is_tensor_accessor : std::false_type {};
template <typename D>
struct is_tensor_accessor<TensorAccessor<D>> : std::true_type {};
}  // namespace ttsim::detail

// Accessors for a tuple of args, their addresses in consecutive runtime args from address_rt_arg_index_start.
namespace tensor_accessor::detail {
template <typename... Args, uint32_t... Indexes>
auto make_tensor_accessor_tuple(const std::tuple<Args...>& args, uint32_t address_rt_arg_index_start,
                                std::integer_sequence<uint32_t, Indexes...>) {
    return std::make_tuple(TensorAccessor(std::get<Indexes>(args), TTSIM->arg(int(address_rt_arg_index_start + Indexes)))...);
}
}  // namespace tensor_accessor::detail

template <typename... Args>
auto make_tensor_accessor_tuple(const std::tuple<Args...>& args, uint32_t address_rt_arg_index_start) {
    return tensor_accessor::detail::make_tensor_accessor_tuple(args, address_rt_arg_index_start,
                                                               std::make_integer_sequence<uint32_t, sizeof...(Args)>());
}

// Accessors for a Metal 2.0 binding sequence.
template <typename... Tokens>
auto make_tensor_accessors(const std::tuple<Tokens...>& tokens) {
    return std::apply([](const auto&... toks) { return std::make_tuple(TensorAccessor(toks)...); }, tokens);
}

// A type-erased accessor, so accessors of different types can sit in one array. It points at the
// accessor it wraps, which must outlive it.
class AbstractTensorAccessorWrapper {
public:
    AbstractTensorAccessorWrapper() = default;

    template <typename Accessor>
    AbstractTensorAccessorWrapper(const Accessor& accessor) :
        accessor_ptr_(&accessor), get_noc_addr_fn_([](const void* a, uint32_t page, uint32_t offset, uint8_t noc) {
            return static_cast<const Accessor*>(a)->get_noc_addr(page, offset, noc);
        }) {}

    uint64_t get_noc_addr(uint32_t page_idx, uint32_t offset = 0, uint8_t noc = noc_index) const {
        return get_noc_addr_fn_(accessor_ptr_, page_idx, offset, noc);
    }

private:
    using GetNocAddrFn = uint64_t (*)(const void*, uint32_t, uint32_t, uint8_t);
    const void* accessor_ptr_ = nullptr;
    GetNocAddrFn get_noc_addr_fn_ = nullptr;
};

namespace tensor_accessor::detail {
template <typename... Accessors, uint32_t... Indexes>
auto make_abstract_tensor_accessor_wrappers(const std::tuple<Accessors...>& accessors,
                                            std::integer_sequence<uint32_t, Indexes...>)
    -> std::array<AbstractTensorAccessorWrapper, sizeof...(Accessors)> {
    return {AbstractTensorAccessorWrapper(std::get<Indexes>(accessors))...};
}
}  // namespace tensor_accessor::detail

template <typename... Accessors>
auto make_abstract_tensor_accessor_wrappers(const std::tuple<Accessors...>& accessors) {
    return tensor_accessor::detail::make_abstract_tensor_accessor_wrappers(
        accessors, std::make_integer_sequence<uint32_t, sizeof...(Accessors)>());
}

// Views of an accessor for the Noc calls: by page, or by shard (sharded tensors only).
template <typename Accessor>
struct PageView {
    const Accessor& accessor;
    explicit PageView(const Accessor& acc) : accessor(acc) {}
    uint64_t get_noc_addr(uint32_t page_id, uint32_t offset, uint8_t noc) const {
        return accessor.get_noc_addr(page_id, offset, noc);
    }
};

template <typename Accessor>
struct ShardView {
    const Accessor& accessor;
    explicit ShardView(const Accessor& acc) : accessor(acc) {}
    bool is_local_shard(uint32_t, uint8_t) const {
        TTSIM->fail("ShardView", "not modeled by the simulator: sharded tensors");
        return false;
    }
    uint64_t get_noc_addr(uint32_t, uint32_t, uint8_t) const {
        TTSIM->fail("ShardView", "not modeled by the simulator: sharded tensors");
        return 0;
    }
};
