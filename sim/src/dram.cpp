// DRAM banks of the simulated chip.
#include <cstring>
#include <string>

#include "device.h"

namespace ttsim {

uint32_t Dram::allocate(uint64_t bytes_per_bank) {
    if (bytes_per_bank == 0) throw SimError("DRAM allocation of 0 bytes");
    uint64_t size = (bytes_per_bank + kAlignment - 1) / kAlignment * kAlignment;
    // First fit between live allocations, so freed space is reused and addresses stay small.
    uint64_t candidate = kBaseAddress;
    for (const auto& [base, bytes] : allocations_) {
        if (candidate + size <= base) break;
        candidate = std::max<uint64_t>(candidate, base + (bytes + kAlignment - 1) / kAlignment * kAlignment);
    }
    if (candidate + size > (uint64_t(1) << 32)) {
        throw SimError("DRAM is full: cannot allocate " + std::to_string(bytes_per_bank) +
                       " bytes per bank within the 4 GiB address range of a bank");
    }
    allocations_[uint32_t(candidate)] = size;
    uint64_t end = candidate + size;
    if (end > top_) {
        top_ = uint32_t(end);
        for (auto& bank : banks_) bank.resize(top_, 0);
    }
    // Fresh allocations read as zero, so results never depend on a previous program's data.
    for (auto& bank : banks_) std::memset(bank.data() + candidate, 0, size);
    return uint32_t(candidate);
}

void Dram::free(uint32_t base) {
    if (allocations_.erase(base) == 0) {
        throw SimError("DRAM free of address " + std::to_string(base) + " which is not a live allocation");
    }
}

uint8_t* Dram::at(int bank, uint64_t offset, uint32_t size, const char* what) {
    if (bank < 0 || bank >= kDramBanks) throw SimError(std::string(what) + ": DRAM bank out of range");
    auto it = allocations_.upper_bound(uint32_t(std::min<uint64_t>(offset, 0xffffffffu)));
    if (it != allocations_.begin()) {
        --it;
        if (offset >= it->first && offset + size <= it->first + it->second) return banks_[bank].data() + offset;
    }
    throw SimError(std::string(what) + ": DRAM access of " + std::to_string(size) + " bytes at bank " +
                   std::to_string(bank) + " address " + std::to_string(offset) +
                   " is outside every allocated buffer");
}

uint64_t Dram::bytes_in_use() const {
    uint64_t total = 0;
    for (const auto& [base, bytes] : allocations_) total += bytes * kDramBanks;
    return total;
}

void Dram::clear() {
    allocations_.clear();
    for (auto& bank : banks_) bank.clear();
    top_ = 0;
}

}  // namespace ttsim
