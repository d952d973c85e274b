// Compile-time questions kernels ask of an address generator (a TensorAccessor, InterleavedAddrGen, ...):
// can it give a page's NoC address, and how does it know its page size. tt-metal's helpers (sdpa's
// dataflow_common.hpp) pick a code path with them.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

template <typename, typename = void>
inline constexpr bool has_get_noc_addr_v = false;
template <typename T>
inline constexpr bool has_get_noc_addr_v<T, std::void_t<decltype(std::declval<T>().get_noc_addr(uint32_t{}))>> = true;

template <typename, typename = void>
inline constexpr bool has_get_aligned_page_size_v = false;
template <typename T>
inline constexpr bool has_get_aligned_page_size_v<T, std::void_t<decltype(std::declval<T>().get_aligned_page_size())>> =
    true;

template <typename, typename = void>
inline constexpr bool has_page_size_v = false;
template <typename T>
inline constexpr bool has_page_size_v<T, std::void_t<decltype(std::declval<T>().page_size)>> = true;

template <typename, typename = void>
inline constexpr bool has_log_base_2_of_page_size_v = false;
template <typename T>
inline constexpr bool has_log_base_2_of_page_size_v<T, std::void_t<decltype(std::declval<T>().log_base_2_of_page_size)>> =
    true;

template <typename T>
inline constexpr bool has_required_addrgen_traits_v =
    has_get_noc_addr_v<T> && (has_get_aligned_page_size_v<T> || has_page_size_v<T> || has_log_base_2_of_page_size_v<T>);
