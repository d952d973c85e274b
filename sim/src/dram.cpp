// DRAM banks of the simulated chip, backed lazily by the host's virtual memory (see device.h).
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "device.h"

namespace ttsim {

Dram::Dram() {
    for (auto& bank : banks_) {
        void* p = mmap(nullptr, kBankAddressSpace, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (p == MAP_FAILED) throw SimError("cannot reserve address space for a simulated DRAM bank");
        bank = static_cast<uint8_t*>(p);
    }
}

Dram::~Dram() {
    for (auto* bank : banks_) {
        if (bank) munmap(bank, kBankAddressSpace);
    }
}

void Dram::discard(uint64_t offset, uint64_t size) {
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    const uint64_t first_whole = (offset + page - 1) / page * page;
    const uint64_t end_whole = (offset + size) / page * page;
    for (auto* bank : banks_) {
        if (first_whole >= end_whole) {  // inside one host page: zero it by hand
            std::memset(bank + offset, 0, size);
            continue;
        }
        std::memset(bank + offset, 0, first_whole - offset);
        madvise(bank + first_whole, end_whole - first_whole, MADV_DONTNEED);
        std::memset(bank + end_whole, 0, offset + size - end_whole);
    }
}

uint32_t Dram::allocate(uint64_t bytes_per_bank, uint32_t pages, uint32_t page_stride) {
    if (bytes_per_bank == 0) throw SimError("DRAM allocation of 0 bytes");
    uint64_t size = (bytes_per_bank + kAlignment - 1) / kAlignment * kAlignment;
    // First fit between live allocations, so freed space is reused and addresses stay small.
    uint64_t candidate = kBaseAddress;
    for (const auto& [base, a] : allocations_) {
        if (candidate + size <= base) break;
        candidate = std::max<uint64_t>(candidate, base + (a.bytes + kAlignment - 1) / kAlignment * kAlignment);
    }
    if (candidate + size > kBankAddressSpace) {
        throw SimError("DRAM is full: cannot allocate " + std::to_string(bytes_per_bank) +
                       " bytes per bank within the 4 GiB address range of a bank");
    }
    allocations_[uint32_t(candidate)] = {size, pages, page_stride};
    // Fresh allocations read as zero, so results never depend on a previous program's data.
    discard(candidate, size);
    return uint32_t(candidate);
}

void Dram::free(uint32_t base) {
    auto it = allocations_.find(base);
    if (it == allocations_.end()) {
        throw SimError("DRAM free of address " + std::to_string(base) + " which is not a live allocation");
    }
    discard(it->first, it->second.bytes);
    allocations_.erase(it);
}

uint8_t* Dram::at(int bank, uint64_t offset, uint32_t size, const char* what) {
    if (bank < 0 || bank >= kDramBanks) throw SimError(std::string(what) + ": DRAM bank out of range");
    auto it = allocations_.upper_bound(uint32_t(std::min<uint64_t>(offset, 0xffffffffu)));
    if (it != allocations_.begin()) {
        --it;
        const Allocation& a = it->second;
        if (offset >= it->first && offset + size <= it->first + a.bytes) {
            if (a.pages == 0) return banks_[bank] + offset;
            const uint64_t in_bank = a.pages / kDramBanks + (uint32_t(bank) < a.pages % kDramBanks ? 1 : 0);
            if (offset + size <= it->first + in_bank * a.page_stride) return banks_[bank] + offset;
            const uint64_t page = (offset - it->first) / a.page_stride * kDramBanks + uint64_t(bank);
            throw SimError(std::string(what) + ": DRAM access of " + std::to_string(size) + " bytes at bank " +
                           std::to_string(bank) + " address " + std::to_string(offset) + " is page " +
                           std::to_string(page) + " of a " + std::to_string(a.pages) +
                           "-page tensor: past its last page, in the bank's padding");
        }
    }
    throw SimError(std::string(what) + ": DRAM access of " + std::to_string(size) + " bytes at bank " +
                   std::to_string(bank) + " address " + std::to_string(offset) +
                   " is outside every allocated buffer");
}

uint64_t Dram::bytes_in_use() const {
    uint64_t total = 0;
    for (const auto& [base, a] : allocations_) total += a.bytes * kDramBanks;
    return total;
}

void Dram::clear() {
    for (const auto& [base, a] : allocations_) discard(base, a.bytes);
    allocations_.clear();
}

}  // namespace ttsim
