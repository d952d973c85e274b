// The one interface between a kernel compiled for the simulator and the simulator itself.
//
// Kernel headers at the real TT-Metalium include paths (api/dataflow/dataflow_api.h, api/compute/...)
// implement each API function as a call through this table. The simulator hands the table to every
// kernel shared object it loads (ttsim_bind), so a kernel .so has no link-time dependency on the
// simulator library, and the same source compiles unchanged for the device.
#pragma once

#include <cstdint>

namespace ttsim {

// Which family of FPU operation the unpacker/math engine is configured for (set by the *_init calls).
enum class FpuOp : uint32_t { None = 0, Copy, Add, Sub, Mul, Matmul, Reduce, Transpose, Tilize };
// tt-metal's BroadcastType numbering.
enum class Bcast : uint32_t { None = 0, Col = 1, Row = 2, Scalar = 3 };
// The SFPU ops that are not elementwise functions (those go through sfpu_eltwise): the pack thread's
// exp (charged to the packer's clock) and cumsum (api/compute/cumsum.h, column totals carried from
// call to call).
enum class SfpuOp : uint32_t { Exp = 0, Cumsum, Count };

// What cb_fifo reports about a circular buffer.
enum class CbFifo : uint32_t { Base = 0, NumPages, PagesPushed, PagesPopped };

// One elementwise SFPU function. DST elements are 32-bit words: fp32 bits for float data, the raw
// integer for Int32/UInt32/UInt16 data. `fn` maps the n_in input words of one element position to
// the output word; params[0..4) are the call's parameters, params[4..8) its init's. An input may be
// broadcast (`broadcast`, two bits per input, input k at bits 2k): its column 0 across each row
// (SfpuBroadcast::Col), its row 0 down each column (Row) or its element 0 everywhere (Scalar).
using SfpuElementFn = uint32_t (*)(const uint32_t* in, const uint32_t* params);
struct SfpuElementwise {
    const char* name;        // the API call, for messages
    const char* init_name;   // the SFPU set-up it needs (the name its *_init passes to sfpu_setup)
    SfpuElementFn fn;
    uint64_t tile_cycles;    // modeled SFPU cycles for all four faces of a tile (ttsim/sfpu_cost.h)
    bool integer_result;     // the output word is an integer: kept as it is, never rounded to bf16
    uint32_t broadcast = 0;  // SfpuBroadcast per input, two bits each
};
enum class SfpuBroadcast : uint32_t { None = 0, Col = 1, Row = 2, Scalar = 3 };
constexpr int kSfpuMaxInputs = 4, kSfpuMaxParams = 4;

class KernelApi {
public:
    virtual ~KernelApi() = default;

    // ---- arguments
    virtual uint32_t arg(int index) = 0;
    virtual uint32_t common_arg(int index) = 0;
    virtual uint32_t arg_address(int index, bool common) = 0;  // L1 address of an arg (get_arg_addr)

    // ---- circular buffers (both kinds of RISC)
    virtual void cb_reserve_back(int cb, int pages) = 0;
    virtual void cb_push_back(int cb, int pages) = 0;
    virtual void cb_wait_front(int cb, int pages) = 0;
    virtual void cb_pop_front(int cb, int pages) = 0;
    virtual bool cb_pages_reservable(int cb, int pages) = 0;
    virtual bool cb_pages_available(int cb, int pages) = 0;
    virtual uint32_t cb_write_ptr(int cb) = 0;
    virtual uint32_t cb_read_ptr(int cb) = 0;
    virtual uint32_t cb_page_size(int cb) = 0;
    virtual uint32_t cb_data_format(int cb) = 0;

    // ---- identity
    virtual uint32_t my_noc_x() = 0;
    virtual uint32_t my_noc_y() = 0;
    virtual uint32_t my_logical_x() = 0;
    virtual uint32_t my_logical_y() = 0;

    // ---- NoC
    virtual uint64_t dram_page_noc_addr(uint32_t bank_base, uint32_t page_id, uint32_t page_size, uint32_t offset) = 0;
    virtual uint64_t worker_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t local_addr) = 0;
    virtual uint64_t multicast_noc_addr(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, uint32_t local_addr) = 0;
    virtual void noc_read(uint64_t src_noc_addr, uint32_t dst_local_addr, uint32_t size) = 0;
    virtual void noc_write(uint32_t src_local_addr, uint64_t dst_noc_addr, uint32_t size) = 0;
    virtual void noc_write_multicast(
        uint32_t src_local_addr, uint64_t dst_mcast_addr, uint32_t size, uint32_t num_dests, bool include_self) = 0;
    virtual void noc_read_barrier() = 0;
    virtual void noc_write_barrier() = 0;
    virtual void noc_writes_flushed() = 0;

    // ---- semaphores (addresses are the kernel-visible L1 addresses of this core)
    virtual uint32_t semaphore_addr(uint32_t id) = 0;
    virtual void semaphore_wait(uint32_t local_addr, uint32_t value, bool at_least) = 0;
    virtual void semaphore_set(uint32_t local_addr, uint32_t value) = 0;
    virtual void semaphore_inc(uint64_t noc_addr, uint32_t incr) = 0;
    virtual void semaphore_set_multicast(
        uint32_t src_local_addr, uint64_t dst_mcast_addr, uint32_t num_dests, bool include_self) = 0;

    // ---- compute: configuration
    virtual void hw_startup(int cb_a, int cb_b, int cb_out) = 0;
    virtual void unpack_reconfig(int cb_a, int cb_b) = 0;  // -1 leaves a source as it is
    virtual void pack_reconfig(int cb_out) = 0;
    virtual void fpu_init(FpuOp op, Bcast bcast, int cb_a, int cb_b, uint32_t flags) = 0;
    virtual void sfpu_init(SfpuOp op) = 0;

    // ---- compute: DST register protocol
    virtual void regs_acquire() = 0;
    virtual void regs_commit() = 0;
    virtual void regs_wait() = 0;
    virtual void regs_release() = 0;

    // ---- compute: FPU
    virtual void copy_tile(int cb, int tile, int dst) = 0;
    virtual void binary_tiles(FpuOp op, Bcast bcast, int cb_a, int cb_b, int tile_a, int tile_b, int dst) = 0;
    virtual void matmul_block(
        int cb_a, int cb_b, int tile_a, int tile_b, int dst, int transpose, int ct, int rt, int kt) = 0;  // transpose -1: as configured by the init
    virtual void reduce_tile(int pool, int dim, int cb, int cb_scaler, int tile, int tile_scaler, int dst) = 0;
    virtual void transpose_tile(int cb, int tile, int dst) = 0;

    // ---- compute: SFPU (operates on DST)
    // faces: which 16x16 faces of the tile the op runs on (bit f for face f; VectorMode R = faces 0-1,
    // C = faces 0 and 2), the rest of the tile left as it is; the cost scales with the face count.
    virtual void sfpu_unary(SfpuOp op, int dst, uint32_t p0, uint32_t p1, uint32_t faces = 0xF) = 0;
    // The pack thread's own SFPU calls (exp_packthread_tile): on DST while the packer holds it. The
    // init keeps its scale (fp32 bits), which the approximate exp applies (p1 of the call: approx).
    virtual void sfpu_init_on_pack(SfpuOp op, uint32_t scale) = 0;
    virtual void sfpu_unary_on_pack(SfpuOp op, int dst, uint32_t p0, uint32_t p1, uint32_t faces = 0xF) = 0;

    // ---- compute: SFPU, any elementwise function (the headers under api/compute define each one next
    // to its API call; ttsim/sfpu.h has the helpers). sfpu_setup is a *_init: it names the set-up the
    // SFPU now has (and the kSfpuMaxParams values it keeps, e.g. a divisor), which later calls must
    // match. sfpu_eltwise applies `fn` to every element of the selected faces of DST tiles
    // in_dst[0..n_in) and writes out_dst; the simulator does the DST protocol checks, DST's rounding
    // and the cost.
    virtual void sfpu_setup(const char* init_name, const uint32_t* init_params) = 0;
    virtual void sfpu_eltwise(const SfpuElementwise& op, const int* in_dst, int n_in, int out_dst, uint32_t faces,
                              const uint32_t* params) = 0;

    // ---- compute: packer
    virtual void pack_tile(int dst, int cb, int out_index, bool out_of_order) = 0;
    // Packer L1 accumulation: while on, pack_tile adds DST onto the tile already at the destination.
    virtual void pack_l1_acc(bool enable) = 0;
    // Packer ReLU (pack_relu_config with ReluConfig::zero()): while on, pack_tile writes max(x, 0).
    virtual void pack_relu(bool enable) = 0;

    // ---- compute: layout conversion (api/compute/tilize.h, untilize.h, pack_untilize.h)
    // Unpacker tilize: DST[dst] = one 32x32 tile cut out of the row-major rows at the front of cb. The
    // rows are block_ct tiles wide; tile_index counts the tiles of that image, 32-row band by band.
    virtual void tilize_tile(int cb, int tile_index, int block_ct, int dst) = 0;
    // Packer untilize (the packer holds DST): DST tiles dst .. dst + block_ct - 1 side by side, written
    // as 32 row-major rows into the pages reserved at cb's back; the rows are full_ct tiles wide and
    // these tiles start at tile column col_tile of them.
    virtual void pack_untilize(int cb, int dst, int block_ct, int full_ct, int col_tile) = 0;
    // DST tile transposed in place through srcB (api/compute/transpose_dest.h): the whole 32x32 tile
    // (of_faces) or each 16x16 face where it is; values_32bit: DST holds 32-bit values moved whole.
    virtual void transpose_dest(int dst, bool of_faces, bool values_32bit) = 0;

    // ---- profiler zones (api/debug/kernel_profiler.hpp's DeviceZoneScopedN): free in modeled time,
    // they attribute each pipeline's busy cycles and the elapsed cycles to a named part of a kernel
    virtual void zone_begin(const char* name) = 0;
    virtual void zone_end() = 0;

    // ---- anything else: stop the run with a message naming the call
    virtual void fail(const char* call, const char* message) = 0;

    // ---- a circular buffer's fifo state as tt-metal's LocalCBInterface exposes it to kernels
    // (get_local_cb_interface): L1 addresses in bytes, page counts since the program started.
    virtual uint32_t cb_fifo(int cb, CbFifo field) = 0;
    // A NoC atomic increment of the same semaphore word in every core of a multicast rectangle.
    virtual void semaphore_inc_multicast(uint64_t dst_mcast_addr, uint32_t incr, uint32_t num_dests) = 0;
    // A NoC write of one 32-bit value carried in the request itself (no L1 source); byte_enable picks
    // which of its four bytes land.
    virtual void noc_write_inline(uint64_t dst_noc_addr, uint32_t value, uint32_t byte_enable) = 0;
    // NoC reads of this core's zero region (MEM_ZEROS, zero_chunk bytes) into local L1: zero-fills
    // [dst_local_addr, +size) one chunk per read.
    virtual void noc_read_zeros(uint32_t dst_local_addr, uint32_t size, uint32_t zero_chunk) = 0;

    // ---- compute: raw SFPI code (sfpi.h), which addresses DST rows itself instead of naming an
    // elementwise function. The emulation reads a DST tile (row-major words, as DST holds it), runs the
    // code on its copy, writes the tiles it stored to back (rounded as any SFPU result unless DST is
    // fp32) and charges the SFPU instructions it counted to the math thread.
    virtual void sfpu_dst_read(const char* call, int dst, uint32_t* words) = 0;
    virtual void sfpu_dst_write(const char* call, int dst, const uint32_t* words) = 0;
    virtual void sfpu_charge(const char* call, uint64_t cycles) = 0;
};

}  // namespace ttsim

// Set by the simulator in every kernel shared object it loads (see kernel_shim.h).
extern ttsim::KernelApi* ttsim_api;

#define TTSIM ttsim_api
