// Iterating over a range of an accessor's pages (api/tensor/pages_address_iterator.h):
// `for (const auto& page : accessor.pages(first, end)) ... page.page_id() ... page.noc_addr()`, every
// `stride`-th page from `first` up to `end`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>

#include "api/tensor/page.h"

namespace tensor_accessor {

template <typename Accessor>
class PagesAddressIteratorInterleaved {
public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = AccessorPage<Accessor>;
    using difference_type = std::ptrdiff_t;
    using reference = const AccessorPage<Accessor>&;
    using pointer = const AccessorPage<Accessor>*;

    // Walks every `stride`-th page from start_page_id; a step that reaches or passes end_page_id stops
    // at end_page_id, so a strided walk still meets the end iterator.
    PagesAddressIteratorInterleaved(const Accessor& accessor, uint32_t start_page_id, uint32_t end_page_id,
                                    uint32_t stride, uint8_t noc) :
        accessor_(&accessor), end_(end_page_id), stride_(stride), noc_(noc),
        current_(0, start_page_id < end_page_id ? start_page_id : end_page_id, &accessor, noc) {}

    uint32_t page_id() const { return current_.page_id(); }
    reference operator*() const { return current_; }
    pointer operator->() const { return &current_; }
    PagesAddressIteratorInterleaved& operator++() {
        advance(1);
        return *this;
    }
    PagesAddressIteratorInterleaved operator++(int) {
        PagesAddressIteratorInterleaved before = *this;
        ++*this;
        return before;
    }
    PagesAddressIteratorInterleaved& operator+=(difference_type steps) {
        advance(steps);
        return *this;
    }
    PagesAddressIteratorInterleaved operator+(difference_type steps) const {
        PagesAddressIteratorInterleaved out = *this;
        out += steps;
        return out;
    }
    value_type operator[](difference_type n) const { return *(*this + n); }
    bool operator==(const PagesAddressIteratorInterleaved& other) const { return page_id() == other.page_id(); }
    bool operator!=(const PagesAddressIteratorInterleaved& other) const { return !(*this == other); }
    bool operator<(const PagesAddressIteratorInterleaved& other) const { return page_id() < other.page_id(); }
    bool operator>(const PagesAddressIteratorInterleaved& other) const { return other < *this; }
    bool operator<=(const PagesAddressIteratorInterleaved& other) const { return !(other < *this); }
    bool operator>=(const PagesAddressIteratorInterleaved& other) const { return !(*this < other); }

private:
    void advance(difference_type steps) {
        // tt-metal only steps forward (it asserts steps >= 0); signed so a backward step cannot wrap past the end.
        const int64_t next = int64_t(current_.page_id()) + int64_t(steps) * int64_t(stride_);
        const uint32_t id = next >= int64_t(end_) ? end_ : uint32_t(next < 0 ? 0 : next);
        current_ = AccessorPage<Accessor>(0, id, accessor_, noc_);
    }

    const Accessor* accessor_;
    uint32_t end_;
    uint32_t stride_;
    uint8_t noc_;
    AccessorPage<Accessor> current_;
};

template <typename Accessor>
class Pages {
public:
    using iterator = PagesAddressIteratorInterleaved<Accessor>;
    using const_iterator = iterator;

    Pages(const Accessor& accessor, uint32_t start_page_id, uint32_t end_page_id, uint32_t stride = 1,
          uint8_t noc = noc_index) :
        accessor_(accessor), start_(start_page_id), end_(end_page_id), stride_(stride), noc_(noc) {}

    iterator begin() const { return iterator(accessor_, start_, end_, stride_, noc_); }
    iterator end() const { return iterator(accessor_, end_, end_, stride_, noc_); }

private:
    const Accessor& accessor_;
    uint32_t start_, end_, stride_;
    uint8_t noc_;
};

}  // namespace tensor_accessor
