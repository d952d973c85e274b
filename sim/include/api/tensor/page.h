// One page of a tensor as an iterator over an accessor yields it (api/tensor/page.h): its page id and
// NoC address, and the accessor it came from.
#pragma once

#include <cstdint>

#include "ttsim/common.h"

namespace tensor_accessor {

class Page {
public:
    Page(uint64_t noc_addr, uint32_t global_page_id) : noc_addr_(noc_addr), global_page_id_(global_page_id) {}
    uint64_t noc_addr() const { return noc_addr_; }
    uint32_t page_id() const { return global_page_id_; }

private:
    uint64_t noc_addr_;
    uint32_t global_page_id_;
};

template <typename Accessor>
class AccessorPage : public Page {
public:
    AccessorPage(uint64_t noc_addr, uint32_t global_page_id, const Accessor* accessor, uint8_t noc = noc_index) :
        Page(noc_addr, global_page_id), accessor_(accessor), noc_(noc) {}
    const Accessor& accessor() const { return *accessor_; }
    // Resolved when asked, from the accessor (the iterator does not compute addresses nobody reads).
    uint64_t noc_addr() const { return accessor_->get_noc_addr(page_id(), 0, noc_); }

private:
    const Accessor* accessor_;
    uint8_t noc_;
};

}  // namespace tensor_accessor
