// The token a Metal 2.0 program generates for a tensor a kernel binds (api/tensor/tensor_binding_token.h):
// where the tensor's accessor args start among the compile-time args, and the byte offset of the
// common runtime arg that holds its address. TensorAccessor(token) builds the accessor from them.
#pragma once

#include <cstdint>

#include "api/tensor/tensor_accessor_args.h"
#include "internal/llk_metadata.h"

namespace binding_details {
template <const auto& Token>
struct LLKOperandExtractor;
}

namespace tensor_accessor {

template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
struct TensorBindingToken {
    using args_t = TensorAccessorArgs<CTA_OFFSET>;
    static constexpr args_t args{};
    static constexpr uint32_t addr_crta_offset = ADDR_CRTA_OFFSET;  // bytes

    explicit constexpr TensorBindingToken(binding_details::LLKMetadata llk) noexcept : llk_metadata_(llk) {}

private:
    template <const auto& Token>
    friend struct binding_details::LLKOperandExtractor;
    binding_details::LLKMetadata llk_metadata_;
};

// Stands for a binding a program does not have; never constructed.
struct NullTensorBindingToken {
    NullTensorBindingToken() = delete;
    NullTensorBindingToken(const NullTensorBindingToken&) = delete;
    NullTensorBindingToken(NullTensorBindingToken&&) = delete;
    NullTensorBindingToken& operator=(const NullTensorBindingToken&) = delete;
    NullTensorBindingToken& operator=(NullTensorBindingToken&&) = delete;
};

}  // namespace tensor_accessor
