// A typed pointer into this core's L1 (api/core_local_mem.h): indexing, pointer arithmetic, and use as
// a local source or destination of a Noc transfer. The simulator maps L1 below 4 GiB, so the address
// is dereferenced directly, as on the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "api/lock.h"
#include "ttsim/common.h"
#if !defined(COMPILE_FOR_TRISC)
#include "api/dataflow/noc.h"
#endif

template <typename T, typename AddressType = uintptr_t>
class CoreLocalMem {
    using difference_type = std::ptrdiff_t;
    static_assert(std::is_integral<AddressType>::value, "AddressType must be an integral type");
    static_assert(std::is_unsigned<AddressType>::value, "AddressType must be unsigned for address representation");
    static_assert(sizeof(AddressType) >= sizeof(difference_type), "AddressType must hold a pointer difference");

public:
    CoreLocalMem(AddressType address) : address_(address) {}
    CoreLocalMem(T* ptr) : address_(reinterpret_cast<AddressType>(ptr)) {}
    CoreLocalMem(const CoreLocalMem&) = default;
    CoreLocalMem& operator=(const CoreLocalMem&) = default;

    tt_l1_ptr T* get_unsafe_ptr() const { return reinterpret_cast<tt_l1_ptr T*>(address_); }
    AddressType get_address() const { return address_; }

    T& operator[](uint32_t index) const { return get_unsafe_ptr()[index]; }
    T& operator*() const { return *get_unsafe_ptr(); }
    tt_l1_ptr T* operator->() const { return get_unsafe_ptr(); }

    CoreLocalMem& operator+=(difference_type n) {
        address_ += n * sizeof(T);
        return *this;
    }
    CoreLocalMem& operator-=(difference_type n) {
        address_ -= n * sizeof(T);
        return *this;
    }
    CoreLocalMem& operator++() { return *this += 1; }
    CoreLocalMem& operator--() { return *this -= 1; }
    CoreLocalMem operator++(int) {
        CoreLocalMem before = *this;
        ++*this;
        return before;
    }
    CoreLocalMem operator--(int) {
        CoreLocalMem before = *this;
        --*this;
        return before;
    }
    CoreLocalMem operator+(difference_type n) const { return CoreLocalMem(AddressType(address_ + n * sizeof(T))); }
    CoreLocalMem operator-(difference_type n) const { return CoreLocalMem(AddressType(address_ - n * sizeof(T))); }
    difference_type operator-(const CoreLocalMem& other) const {
        return (static_cast<difference_type>(address_) - static_cast<difference_type>(other.address_)) /
               difference_type(sizeof(T));
    }

    // The device flushes/invalidates its data cache around the region; the simulator's L1 is plain
    // coherent host memory, so there is nothing to release.
    [[nodiscard]] auto scoped_lock(size_t num_elements) const {
        (void)num_elements;
        return Lock([]() {});
    }

    bool operator==(const CoreLocalMem& other) const { return address_ == other.address_; }
    bool operator!=(const CoreLocalMem& other) const { return address_ != other.address_; }
    bool operator<(const CoreLocalMem& other) const { return address_ < other.address_; }
    bool operator<=(const CoreLocalMem& other) const { return address_ <= other.address_; }
    bool operator>(const CoreLocalMem& other) const { return address_ > other.address_; }
    bool operator>=(const CoreLocalMem& other) const { return address_ >= other.address_; }
    explicit operator bool() const { return address_ != 0; }

private:
    AddressType address_;
};

#if !defined(COMPILE_FOR_TRISC)
template <typename T, typename AddressType>
struct noc_traits_t<CoreLocalMem<T, AddressType>> {
    struct src_args_type {
        AddressType offset_bytes = 0;
    };
    struct dst_args_type {
        AddressType offset_bytes = 0;
    };
    struct dst_args_mcast_type {};
    template <Noc::AddressType address_type>
    static auto src_addr(const CoreLocalMem<T, AddressType>& src, const Noc&, const src_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1, "CoreLocalMem can only be used as local L1 source");
        return src.get_address() + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static auto dst_addr(const CoreLocalMem<T, AddressType>& dst, const Noc&, const dst_args_type& args) {
        static_assert(address_type == Noc::AddressType::LOCAL_L1, "CoreLocalMem can only be used as local L1 dest");
        return dst.get_address() + args.offset_bytes;
    }
    template <Noc::AddressType address_type>
    static auto dst_addr_mcast(const CoreLocalMem<T, AddressType>&, const Noc&, const dst_args_mcast_type&) {
        static_assert(address_type != address_type, "CoreLocalMem cannot be used as NoC mcast destination");
        return uint64_t(0);
    }
};

template <typename T, typename AddressType>
inline constexpr bool noc_zero_l1_endpoint_v<CoreLocalMem<T, AddressType>> = true;
#endif

// As on the device, a data-movement kernel that has this endpoint also has the TensorAccessor one.
#if !defined(COMPILE_FOR_TRISC)
#include "api/tensor/noc_traits.h"
#endif
