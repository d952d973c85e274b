// The data-movement kernel API (api/dataflow/dataflow_api.h in TT-Metalium), implemented by the
// simulator. Signatures follow the pinned ttnn release's header; every call goes through TTSIM.
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/compile_time_args.h"
#include "api/debug/kernel_profiler.hpp"  // DeviceZoneScopedN, as the device's dataflow_api.h provides it
#include "api/tensor/tensor_accessor.h"
#include "chlkc_descriptors.h"
#include "internal/circular_buffer_interface.h"
#include "internal/risc_attribs.h"
#include "internal/dataflow/dataflow_api_addrgen.h"
#include "ttsim/common.h"
// VALID / INVALID and the other host-device constants, from the pinned wheel when it is on the include path.
#if __has_include("hostdevcommon/common_values.hpp")
#include "hostdevcommon/common_values.hpp"
#endif

// Wormhole NoC constants kernels use by name.
#ifndef NOC_MAX_BURST_SIZE
#define NOC_MAX_BURST_SIZE 8192  // 256 words of 32 bytes per packet
#endif
#ifndef NOC_UNICAST_WRITE_VC
#define NOC_UNICAST_WRITE_VC 1
#endif
#ifndef NOC_MULTICAST_WRITE_VC
#define NOC_MULTICAST_WRITE_VC 4
#endif

// ---- arguments
template <typename T>
FORCE_INLINE T get_arg_val(int arg_idx) {
    static_assert(sizeof(T) == 4, "runtime arguments are 32-bit");
    uint32_t v = TTSIM->arg(arg_idx);
    return *reinterpret_cast<T*>(&v);
}
template <typename T>
FORCE_INLINE T get_common_arg_val(int arg_idx) {
    static_assert(sizeof(T) == 4, "runtime arguments are 32-bit");
    uint32_t v = TTSIM->common_arg(arg_idx);
    return *reinterpret_cast<T*>(&v);
}
FORCE_INLINE uint32_t get_arg_addr(int arg_idx) { return TTSIM->arg_address(arg_idx, false); }
FORCE_INLINE uint32_t get_common_arg_addr(int arg_idx) { return TTSIM->arg_address(arg_idx, true); }

// ---- identity: my_x[noc] / my_y[noc] hold this core's NoC coordinates
namespace ttsim::detail {
struct NocCoordArray {
    bool is_y;
    uint8_t operator[](int) const { return is_y ? TTSIM->my_noc_y() : TTSIM->my_noc_x(); }
};
}  // namespace ttsim::detail
#define my_x (ttsim::detail::NocCoordArray{false})
#define my_y (ttsim::detail::NocCoordArray{true})
inline uint8_t get_absolute_logical_x() { return TTSIM->my_logical_x(); }
inline uint8_t get_absolute_logical_y() { return TTSIM->my_logical_y(); }
inline uint8_t get_relative_logical_x() { return TTSIM->my_logical_x(); }
inline uint8_t get_relative_logical_y() { return TTSIM->my_logical_y(); }

// ---- circular buffers
inline void cb_push_back(const int32_t operand, const int32_t num_pages) { TTSIM->cb_push_back(operand, num_pages); }
inline void cb_pop_front(int32_t operand, int32_t num_pages) { TTSIM->cb_pop_front(operand, num_pages); }
// The tile size of the CB's format, baked into the build like the format (tt-metal's unpack_tile_size),
// so kernels may use it in constant expressions; a CB the build was not given reads its page size.
constexpr std::int32_t get_tile_size(const std::int32_t operand) {
    if (unpack_tile_size[operand] != 0) return unpack_tile_size[operand];
    return TTSIM->cb_page_size(operand);
}
constexpr inline uint32_t get_tile_hw(const std::int32_t operand) {
    return uint32_t(unpack_tile_r_dim[operand]) * uint32_t(unpack_tile_c_dim[operand]);
}
constexpr inline uint32_t get_tile_num_faces(const std::int32_t operand) { return unpack_tile_num_faces[operand]; }
// A CB's format as tt-metal's JIT bakes it into every kernel of the program (chlkc_descriptors.h), so
// kernels can use it as a template argument.
constexpr DataFormat get_dataformat(const std::int32_t operand) { return DataFormat(unpack_src_format[operand]); }
inline uint32_t get_write_ptr(uint32_t operand) { return TTSIM->cb_write_ptr(operand); }
inline uint32_t get_read_ptr(uint32_t operand) { return TTSIM->cb_read_ptr(operand); }
inline bool cb_pages_reservable_at_back(int32_t operand, int32_t num_pages) {
    return TTSIM->cb_pages_reservable(operand, num_pages);
}
inline void cb_reserve_back(int32_t operand, int32_t num_pages) { TTSIM->cb_reserve_back(operand, num_pages); }
inline bool cb_pages_available_at_front(int32_t operand, int32_t num_pages) {
    return TTSIM->cb_pages_available(operand, num_pages);
}
inline void cb_wait_front(int32_t operand, int32_t num_pages) { TTSIM->cb_wait_front(operand, num_pages); }

// ---- NoC addresses
inline uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc = noc_index) {
    (void)noc;
    return TTSIM->worker_noc_addr(noc_x, noc_y, addr);
}
inline std::uint64_t get_noc_addr(std::uint32_t addr, uint8_t noc = noc_index) {
    (void)noc;
    return TTSIM->worker_noc_addr(TTSIM->my_noc_x(), TTSIM->my_noc_y(), addr);
}
inline uint64_t get_noc_multicast_addr(
    uint32_t noc_x_start,
    uint32_t noc_y_start,
    uint32_t noc_x_end,
    uint32_t noc_y_end,
    uint32_t addr,
    uint8_t noc = noc_index) {
    (void)noc;
    return TTSIM->multicast_noc_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr);
}

// The NoC address of an offset in one bank of the allocator. DRAM bank b is the simulator's DRAM
// bank b (a buffer sits at the same offset in every bank); interleaved L1 buffers do not exist in
// the simulator.
template <bool DRAM>
FORCE_INLINE uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t bank_address_offset, uint8_t noc = noc_index) {
    (void)noc;
    if constexpr (DRAM) {
        if (bank_id >= 12) TTSIM->fail("get_noc_addr_from_bank_id", "DRAM bank id out of range 0..11");
        return TTSIM->dram_page_noc_addr(bank_address_offset, bank_id, 0, 0);
    } else {
        TTSIM->fail("get_noc_addr_from_bank_id", "not modeled by the simulator: L1 banks (interleaved L1 buffers)");
        return 0;
    }
}

// Interleaved address generators (the pre-TensorAccessor way of addressing an interleaved buffer).
template <bool DRAM>
struct InterleavedAddrGen {
    uint32_t bank_base_address;
    uint32_t page_size;
    std::uint64_t get_noc_addr(const uint32_t id, const uintptr_t offset = 0, uint8_t noc = noc_index) const {
        static_assert(DRAM, "the simulator supports DRAM interleaved buffers only");
        (void)noc;
        return TTSIM->dram_page_noc_addr(bank_base_address, id, page_size, uint32_t(offset));
    }
};
template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
    uint32_t bank_base_address;
    uint32_t page_size;
    DataFormat data_format;
    std::uint64_t get_noc_addr(const uint32_t id, const uint32_t offset = 0, uint8_t noc = noc_index) const {
        static_assert(DRAM, "the simulator supports DRAM interleaved buffers only");
        (void)noc;
        return TTSIM->dram_page_noc_addr(bank_base_address, id, page_size, offset);
    }
};

namespace ttsim::detail {
template <typename AddrGen>
uint32_t page_size_of(const AddrGen& g) {
    if constexpr (is_tensor_accessor<AddrGen>::value) {
        return g.aligned_page_size;
    } else {
        return g.page_size;
    }
}
}  // namespace ttsim::detail

// ---- NoC transfers
template <uint32_t max_page_size = 8192 + 1, bool enable_noc_tracing = true>
inline void noc_async_read(
    uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size, uint8_t noc = noc_index, uint32_t read_req_vc = 0) {
    (void)noc;
    (void)read_req_vc;
    TTSIM->noc_read(src_noc_addr, dst_local_l1_addr, size);
}
template <uint32_t max_page_size = 8192 + 1, bool enable_noc_tracing = true, bool posted = false>
inline void noc_async_write(
    uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size, uint8_t noc = noc_index, uint32_t vc = 0) {
    (void)noc;
    (void)vc;
    TTSIM->noc_write(src_local_l1_addr, dst_noc_addr, size);
}
template <uint32_t max_page_size = 8192 + 1>
inline void noc_async_write_multicast(
    uint32_t src_local_l1_addr,
    uint64_t dst_noc_addr_multicast,
    uint32_t size,
    uint32_t num_dests,
    bool linked = false,
    uint8_t noc = noc_index,
    uint8_t vc = 0) {
    (void)linked;
    (void)noc;
    (void)vc;
    TTSIM->noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, false);
}
inline void noc_async_write_multicast_loopback_src(
    std::uint32_t src_local_l1_addr,
    std::uint64_t dst_noc_addr_multicast,
    std::uint32_t size,
    std::uint32_t num_dests,
    bool linked = false,
    uint8_t noc = noc_index) {
    (void)linked;
    (void)noc;
    TTSIM->noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, true);
}

template <typename AddrGen, bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_read_page(
    const uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0, uint8_t noc = noc_index) {
    (void)noc;
    TTSIM->noc_read(addrgen.get_noc_addr(id, offset), dst_local_l1_addr, ttsim::detail::page_size_of(addrgen) - offset);
}
template <typename AddrGen, bool enable_noc_tracing = true, bool posted = false>
FORCE_INLINE void noc_async_write_page(
    const uint32_t id,
    const AddrGen& addrgen,
    uint32_t src_local_l1_addr,
    uint32_t size = 0,
    uint32_t offset = 0,
    uint8_t noc = noc_index) {
    (void)noc;
    uint32_t bytes = size ? size : ttsim::detail::page_size_of(addrgen) - offset;
    TTSIM->noc_write(src_local_l1_addr, addrgen.get_noc_addr(id, offset), bytes);
}
template <typename DSpec>
FORCE_INLINE void noc_async_read_tile(
    const uint32_t id, const TensorAccessor<DSpec>& addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0, uint8_t noc = noc_index) {
    noc_async_read_page(id, addrgen, dst_local_l1_addr, offset, noc);
}
template <bool DRAM, uint32_t tile_hw>
FORCE_INLINE void noc_async_read_tile(
    const uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0,
    uint8_t noc = noc_index) {
    noc_async_read_page(id, addrgen, dst_local_l1_addr, offset, noc);
}
template <typename DSpec>
FORCE_INLINE void noc_async_write_tile(
    const uint32_t id, const TensorAccessor<DSpec>& addrgen, uint32_t src_local_l1_addr, uint8_t noc = noc_index) {
    noc_async_write_page(id, addrgen, src_local_l1_addr, 0, 0, noc);
}
template <bool DRAM, uint32_t tile_hw>
FORCE_INLINE void noc_async_write_tile(
    const uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& addrgen, uint32_t src_local_l1_addr, uint8_t noc = noc_index) {
    noc_async_write_page(id, addrgen, src_local_l1_addr, 0, 0, noc);
}

// Single-packet forms: the same transfer for the simulator, which does not split by packet.
template <bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_read_one_packet(
    uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size, uint8_t noc = noc_index,
    uint32_t read_req_vc = NOC_UNICAST_WRITE_VC) {
    (void)noc;
    (void)read_req_vc;
    TTSIM->noc_read(src_noc_addr, dst_local_l1_addr, size);
}
template <bool enable_noc_tracing = true, bool posted = false>
FORCE_INLINE void noc_async_write_one_packet(
    std::uint32_t src_local_l1_addr, std::uint64_t dst_noc_addr, std::uint32_t size, uint8_t noc = noc_index,
    uint32_t vc = NOC_UNICAST_WRITE_VC) {
    (void)noc;
    (void)vc;
    TTSIM->noc_write(src_local_l1_addr, dst_noc_addr, size);
}
template <bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_write_multicast_one_packet(
    std::uint32_t src_local_l1_addr, std::uint64_t dst_noc_addr_multicast, std::uint32_t size, std::uint32_t num_dests,
    bool linked = false, uint8_t noc = noc_index) {
    (void)linked;
    (void)noc;
    TTSIM->noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, false);
}

// ---- transaction ids. The simulator keeps one outstanding-read and one outstanding-write time per
// kernel, not one per id: tagging a transfer has nothing to record, and a barrier on one id waits for
// every transfer of the kernel (never less than the device would wait).
constexpr uint8_t write_cmd_buf = 0;
constexpr uint8_t read_cmd_buf = 1;
constexpr uint8_t write_reg_cmd_buf = 2;
constexpr uint8_t write_at_cmd_buf = 3;

FORCE_INLINE void noc_async_read_set_trid(uint32_t trid = 0, uint8_t noc = noc_index) {
    (void)trid;
    (void)noc;
}
FORCE_INLINE void noc_async_write_set_trid(uint32_t trid = 0, uint8_t noc = noc_index) {
    (void)trid;
    (void)noc;
}
FORCE_INLINE void noc_async_read_barrier_with_trid(uint32_t trid, uint8_t noc = noc_index) {
    (void)trid;
    (void)noc;
    TTSIM->noc_read_barrier();
}
FORCE_INLINE void noc_async_write_barrier_with_trid(uint32_t trid, uint8_t noc = noc_index) {
    (void)trid;
    (void)noc;
    TTSIM->noc_write_barrier();
}
FORCE_INLINE void noc_async_write_flushed_with_trid(uint32_t trid, uint8_t noc = noc_index) {
    (void)trid;
    (void)noc;
    TTSIM->noc_writes_flushed();
}
template <bool update_counter = true, bool posted = false>
FORCE_INLINE void noc_async_write_one_packet_with_trid(
    uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size, uint32_t trid, uint8_t cmd_buf = write_cmd_buf,
    uint8_t noc = noc_index, uint8_t vc = NOC_UNICAST_WRITE_VC) {
    (void)trid;
    (void)cmd_buf;
    (void)noc;
    (void)vc;
    TTSIM->noc_write(src_local_l1_addr, dst_noc_addr, size);
}

// ---- a 32-bit value written over the NoC from the request itself (no L1 source)
template <InlineWriteDst dst_type = InlineWriteDst::DEFAULT, bool posted = false, bool flush = true>
FORCE_INLINE void noc_inline_dw_write(
    uint64_t addr, uint32_t val, uint8_t be = 0xF, uint8_t noc = noc_index, uint8_t vc = NOC_UNICAST_WRITE_VC,
    uint32_t customized_src_addr = 0) {
    (void)noc;
    (void)vc;
    (void)customized_src_addr;
    if constexpr (dst_type == InlineWriteDst::REG) {
        TTSIM->fail("noc_inline_dw_write", "not modeled by the simulator: writes to stream registers");
    }
    TTSIM->noc_write_inline(addr, val, be);
}

inline void noc_async_read_barrier(uint8_t noc = noc_index) {
    (void)noc;
    TTSIM->noc_read_barrier();
}
inline void noc_async_write_barrier(uint8_t noc = noc_index) {
    (void)noc;
    TTSIM->noc_write_barrier();
}
inline void noc_async_writes_flushed(uint8_t noc = noc_index) {
    (void)noc;
    TTSIM->noc_writes_flushed();
}
// Posted writes are tracked with the others: flushed when every write of this kernel has left.
inline void noc_async_posted_writes_flushed(uint8_t noc = noc_index) {
    (void)noc;
    TTSIM->noc_writes_flushed();
}
// The simulator applies a semaphore increment when it is issued and books its arrival time at the
// target (what a waiter there sees), so no acknowledgement is outstanding and the barrier has nothing
// to wait for.
inline void noc_async_atomic_barrier(uint8_t noc_idx = noc_index) { (void)noc_idx; }
inline void noc_async_full_barrier(uint8_t noc_idx = noc_index) {
    (void)noc_idx;
    TTSIM->noc_read_barrier();
    TTSIM->noc_write_barrier();
}

// ---- semaphores
template <ProgrammableCoreType type = ProgrammableCoreType::TENSIX>
FORCE_INLINE uintptr_t get_semaphore(uint32_t semaphore_id) {
    return TTSIM->semaphore_addr(semaphore_id);
}
inline void noc_semaphore_wait(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val) {
    TTSIM->semaphore_wait(ttsim::detail::l1_addr_of(sem_addr), val, false);
}
inline void noc_semaphore_wait_min(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val) {
    TTSIM->semaphore_wait(ttsim::detail::l1_addr_of(sem_addr), val, true);
}
inline void noc_semaphore_set(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val) {
    TTSIM->semaphore_set(ttsim::detail::l1_addr_of(sem_addr), val);
}
template <bool posted = false>
FORCE_INLINE void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t noc_id = noc_index, uint8_t vc = 0) {
    (void)noc_id;
    (void)vc;
    TTSIM->semaphore_inc(addr, incr);
}
template <bool posted = false>
FORCE_INLINE void noc_semaphore_inc_multicast(
    uint64_t addr, uint32_t incr, uint32_t num_dests, uint8_t noc_id = noc_index, uint8_t vc = NOC_MULTICAST_WRITE_VC) {
    (void)noc_id;
    (void)vc;
    TTSIM->semaphore_inc_multicast(addr, incr, num_dests);
}
inline void noc_semaphore_set_remote(std::uint32_t src_local_l1_addr, std::uint64_t dst_noc_addr, uint8_t noc = noc_index) {
    (void)noc;
    TTSIM->noc_write(src_local_l1_addr, dst_noc_addr, 4);
}
inline void noc_semaphore_set_multicast(
    uint32_t src_local_l1_addr,
    uint64_t dst_noc_addr_multicast,
    uint32_t num_dests,
    bool linked = false,
    uint8_t noc = noc_index,
    uint8_t vc = 0) {
    (void)linked;
    (void)noc;
    (void)vc;
    TTSIM->semaphore_set_multicast(src_local_l1_addr, dst_noc_addr_multicast, num_dests, false);
}
inline void noc_semaphore_set_multicast_loopback_src(
    uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast, uint32_t num_dests, bool linked = false,
    uint8_t noc = noc_index) {
    (void)linked;
    (void)noc;
    TTSIM->semaphore_set_multicast(src_local_l1_addr, dst_noc_addr_multicast, num_dests, true);
}
