// TensorAccessorArgs for the simulator: interleaved DRAM tensors, configured entirely at compile
// time (the layout ttnn's TensorAccessorArgs(buffer) emits for an interleaved DRAM buffer: an
// ArgsConfig word, then the aligned page size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>

#include "api/compile_time_args.h"

namespace tensor_accessor {
constexpr std::size_t UNKNOWN = static_cast<std::size_t>(-1);
enum class ArgConfig : uint8_t {
    None = 0,
    Sharded = 1 << 0,
    IsDram = 1 << 1,
    RuntimeRank = 1 << 2,
    RuntimeNumBanks = 1 << 3,
    RuntimeTensorShape = 1 << 4,
    RuntimeShardShape = 1 << 5,
    RuntimeBankCoords = 1 << 6,
    RuntimePageSize = 1 << 7,
};
}  // namespace tensor_accessor

template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET = tensor_accessor::UNKNOWN>
struct TensorAccessorArgs {
    static constexpr uint32_t config = get_compile_time_arg_val(CTA_OFFSET);
    static constexpr bool is_sharded = config & uint32_t(tensor_accessor::ArgConfig::Sharded);
    static constexpr bool is_dram = config & uint32_t(tensor_accessor::ArgConfig::IsDram);
    static constexpr bool page_size_is_crta = config & uint32_t(tensor_accessor::ArgConfig::RuntimePageSize);
    // Config 0 is what the host emits for an absent optional tensor (TensorAccessorArgs(nullptr)): kernels
    // declare such args unconditionally and never read through them, so they compile here and fail if used.
    static constexpr bool is_null = config == 0;
    static constexpr bool is_interleaved = !is_sharded;
    static_assert(!is_sharded, "the simulator supports interleaved tensors only");
    static_assert(is_dram || is_null, "the simulator supports DRAM tensors only");
    static_assert(!page_size_is_crta, "the simulator needs the page size as a compile-time argument");
    static constexpr uint32_t AlignedPageSize = get_compile_time_arg_val(CTA_OFFSET + 1);

    constexpr TensorAccessorArgs() = default;
    static constexpr uint32_t num_compile_time_args() { return 2; }
    static constexpr uint32_t next_compile_time_args_offset() { return CTA_OFFSET + num_compile_time_args(); }
    static constexpr uint32_t num_common_runtime_args() { return 0; }
    // Interleaved DRAM tensors take no common runtime args: the next accessor's start where this one's did.
    static constexpr uint32_t next_common_runtime_args_offset() { return CRTA_OFFSET; }
    constexpr uint32_t get_aligned_page_size() const { return AlignedPageSize; }
};

// The args of NUM_TENSORS accessors laid out one after another from CTA_OFFSET, as a tuple.
namespace tensor_accessor::detail {
template <uint32_t NUM_TENSORS, uint32_t CTA_OFFSET>
constexpr auto chained_tensor_accessor_args() {
    if constexpr (NUM_TENSORS == 0) {
        return std::tuple<>();
    } else {
        using First = TensorAccessorArgs<CTA_OFFSET>;
        return std::tuple_cat(std::make_tuple(First()),
                              chained_tensor_accessor_args<NUM_TENSORS - 1, First::next_compile_time_args_offset()>());
    }
}
}  // namespace tensor_accessor::detail

template <uint32_t NUM_TENSORS, uint32_t CTA_OFFSET>
constexpr auto make_tensor_accessor_args_tuple() {
    return tensor_accessor::detail::chained_tensor_accessor_args<NUM_TENSORS, CTA_OFFSET>();
}
