// TensorAccessor for interleaved DRAM tensors: page i lives in bank i % 12 at
// bank_base + (i / 12) * aligned_page_size, which the simulator resolves to a NoC address.
//
// As in TT-Metalium, TensorAccessor is a class template (over its distribution spec; here the
// TensorAccessorArgs type), deduced from the args object: `const auto acc = TensorAccessor(args, addr, size);`.
// Helper functions that take an accessor must therefore be templates, exactly as on the device.
#pragma once

#include <cstdint>
#include <type_traits>

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
