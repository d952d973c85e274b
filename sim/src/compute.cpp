// The compute half of the kernel API: the DST register protocol, the FPU (unpack -> math), the SFPU
// and the packer, with the three TRISC pipelines timed separately.
//
// Numerics: DST holds fp32 values; without fp32_dest_acc_en every result written to DST is rounded
// to bf16 (DST then holds Float16_b); integer data (Int32/UInt32 CBs, integer SFPU results) stays raw
// 32-bit words and needs 32-bit DST. FPU operands are what srcA/srcB hold (to_fpu_operand). SFPU
// functions are the elementwise functions the kernel headers define (each header says which follow
// tt-llk's formula and which compute exactly in fp32 where the hardware approximates).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "scheduler.h"
#include "timing.h"

namespace ttsim {

namespace {
float bits_to_float(uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}
const char* fpu_op_name(FpuOp op) {
    switch (op) {
        case FpuOp::None: return "none";
        case FpuOp::Copy: return "copy (copy_init)";
        case FpuOp::Add: return "add (add_init / add_bcast_*_init)";
        case FpuOp::Sub: return "sub (sub_init / sub_bcast_*_init)";
        case FpuOp::Mul: return "mul (mul_init / mul_bcast_*_init)";
        case FpuOp::Matmul: return "matmul (matmul_init / matmul_block_init)";
        case FpuOp::Reduce: return "reduce (reduce_init)";
        case FpuOp::Transpose: return "transpose (transpose_init)";
        case FpuOp::Tilize: return "tilize (tilize_init / fast_tilize_init)";
    }
    return "?";
}
// B's column 0 (Col), row 0 (Row) or element [0][0] (Scalar) repeated over the whole tile.
void broadcast_in_place(std::array<float, TILE_ELEMS>& t, Bcast b) {
    for (int r = TILE_DIM - 1; r >= 0; --r) {
        for (int c = TILE_DIM - 1; c >= 0; --c) {
            t[r * TILE_DIM + c] = b == Bcast::Col ? t[r * TILE_DIM] : b == Bcast::Row ? t[c] : t[0];
        }
    }
}
const char* bcast_name(Bcast b) {
    switch (b) {
        case Bcast::None: return "none";
        case Bcast::Col: return "cols";
        case Bcast::Row: return "rows";
        case Bcast::Scalar: return "scalar";
    }
    return "?";
}
}  // namespace

ComputeState& Scheduler::compute_state(const char* what) {
    Fiber& f = me();
    if (!f.compute) raise(std::string(what) + ": compute API called from a data-movement kernel");
    return *f.compute;
}

void Scheduler::require_dst_index(int dst, const char* what) {
    Fiber& f = me();
    // Half of DST per acquire (double-buffered between math and pack): 8 bf16 or 4 fp32 tiles.
    int capacity = f.spec->fp32_dest ? 4 : 8;
    if (dst < 0 || dst >= capacity) {
        raise(std::string(what) + ": DST index " + std::to_string(dst) + " is past the " + std::to_string(capacity) +
              " tiles a tile_regs_acquire provides" + (f.spec->fp32_dest ? " with fp32_dest_acc_en" : ""));
    }
}

void Scheduler::require_math(const char* what) {
    ComputeState& cs = compute_state(what);
    if (!cs.started) raise(std::string(what) + ": compute_kernel_hw_startup was not called first");
    if (cs.dst_state != ComputeState::Dst::Acquired) {
        raise(std::string(what) + ": writes DST without holding it (call tile_regs_acquire first; tile_regs_commit hands DST to the packer)");
    }
}

void Scheduler::require_fpu_init(FpuOp op, Bcast bcast, const char* what) {
    ComputeState& cs = compute_state(what);
    if (cs.fpu_op != op || cs.bcast != bcast) {
        raise(std::string(what) + ": the FPU is configured for " + fpu_op_name(cs.fpu_op) + " (broadcast " +
              bcast_name(cs.bcast) + "), not " + fpu_op_name(op) + " (broadcast " + bcast_name(bcast) +
              "); call the matching *_init first");
    }
}

const uint8_t* Scheduler::front_tile(int cb, int tile, const char* what) {
    CircularBuffer& c = cb_of(cb, what);
    if (tile < 0 || uint64_t(tile) >= c.fill()) {
        raise(std::string(what) + ": tile " + std::to_string(tile) + " of CB " + std::to_string(cb) + " is not at the front (" +
              std::to_string(c.fill()) + " pages available; cb_wait_front first)");
    }
    // Pushed is not enough: on the device the unpacker may only read pages a cb_wait_front covered.
    if (c.popped + uint64_t(tile) >= c.waited) {
        raise(std::string(what) + ": tile " + std::to_string(tile) + " of CB " + std::to_string(cb) +
              " was not waited for (cb_wait_front covered " + std::to_string(c.waited > c.popped ? c.waited - c.popped : 0) +
              " pages); call cb_wait_front for the tiles you unpack");
    }
    uint32_t slot = c.read_slot() + uint32_t(tile);
    if (c.l1_offset + uint64_t(slot + 1) * c.page_size > kL1Bytes) {  // a block crossing the CB's end reads on
        raise(std::string(what) + ": tile " + std::to_string(tile) + " of CB " + std::to_string(cb) +
              " would be read past the end of L1 (a block crossing the CB's end reads on into the following L1)");
    }
    if (c.page_size < tile_bytes(c.format)) {
        raise(std::string(what) + ": CB " + std::to_string(cb) + " pages of " + std::to_string(c.page_size) +
              " bytes are smaller than a tile of its format");
    }
    return me().core->l1 + c.l1_offset + size_t(slot) * c.page_size;
}

void Scheduler::load_operand(int cb, int tile, float* out, bool fpu_operand, const char* what) {
    const uint8_t* src = front_tile(cb, tile, what);
    // The mode sets the CB's unpack output format to Float32, which srcA/srcB cannot hold: only
    // datacopies (copy_tile, transpose_tile) may read such a CB.
    if (fpu_operand && cb >= 0 && cb < 32 && ((me().spec->unpack_to_dest_fp32 >> cb) & 1u)) {
        raise(std::string(what) + ": CB " + std::to_string(cb) + " is in UnpackToDestFp32 mode, so FPU operations "
              "cannot read it through srcA/srcB; give that mode only to CBs the kernel reads by copy_tile/transpose_tile");
    }
    if (program_->timing_only) return;
    DataFormat fmt = cb_of(cb, what).format;
    unpack_tile(fmt, src, out);
    if (fpu_operand && fmt == DataFormat::Float32) {
        for (int i = 0; i < TILE_ELEMS; ++i) out[i] = to_fpu_operand(out[i]);
    }
}

// Whether a datacopy from `cb` bypasses srcA. Only a CB in UnpackToDestFp32 mode does, and only into
// 32-bit DST; every other copy goes through srcA, which holds TF32, so a Float32 tile loses its low
// 13 mantissa bits on the way even when DST is fp32.
bool Scheduler::unpacks_to_dest(int cb, const char* what) {
    const KernelSpec& k = *me().spec;
    const bool direct = cb >= 0 && cb < 32 && ((k.unpack_to_dest_fp32 >> cb) & 1u);
    if (direct && !k.fp32_dest) {
        raise(std::string(what) + ": CB " + std::to_string(cb) + " is in UnpackToDestFp32 mode, which needs 32-bit DST "
              "(fp32_dest_acc_en)");
    }
    return direct;
}

void Scheduler::finish_dst_write(int dst) {
    Fiber& f = me();
    if (f.spec->fp32_dest || program_->timing_only) return;
    auto& t = f.compute->dst[dst];
    for (float& v : t) v = round_to_bf16(v);
}

uint64_t Scheduler::unpack_transfer_cycles(uint64_t a, uint64_t b) const {
    auto ceil_div = [](uint64_t x, uint64_t y) { return (x + y - 1) / y; };
    // Each unpacker alone at most kUnpackBytesPerCycle; both active together at most the setting's joint rate.
    const uint64_t joint = a > 0 && b > 0 ? ceil_div(a + b, costs().unpack_joint_bytes_per_cycle) : 0;
    return std::max({ceil_div(a, timing::kUnpackBytesPerCycle), ceil_div(b, timing::kUnpackBytesPerCycle), joint});
}

void Scheduler::charge_unpack(ComputeState& cs, int cb_srca, int tiles_srca, int cb_srcb, int tiles_srcb) {
    Fiber& f = me();
    auto bytes_of = [&](int cb, int tiles) {
        return tiles > 0 ? uint64_t(tile_bytes(cb_of(cb, "unpack").format)) * uint64_t(tiles) : uint64_t(0);
    };
    const uint64_t a = bytes_of(cb_srca, tiles_srca), b = bytes_of(cb_srcb, tiles_srcb);
    const uint64_t unpacrs = uint64_t(std::max(tiles_srca, 0) + std::max(tiles_srcb, 0)) * timing::kUnpacrPerTileFaces;
    const uint64_t cycles = unpack_transfer_cycles(a, b) + unpacrs * timing::kUnpacrSetupCycles + costs().llk_call;
    // srcA/srcB are double-buffered: the unpackers fill one bank while math works on the other, so
    // the next unpack may start once the FPU has started on the previous operands. SFPU ops work on
    // DST alone (VectorUnit.md) and do not hold the unpackers back.
    cs.t_unpack = std::max({cs.t_unpack, cs.srca_free, cs.srcb_free}) + cycles;
    f.busy += cycles;
    cs.unpack_busy += cycles;
    counters_.unpack_busy_cycles += cycles;
}

// One K step of an rt x ct matmul block, as tt-llk runs it (llk_unpack_AB_matmul.h, llk_math_matmul.h):
// one operand is reused across the block's longer side (in0 in srcB when ct >= rt, else in1 in srcA), the
// other streams through its register one tile per UNPACR. The reused operand's t_dim tiles are unpacked two
// at a time (one per bank), and each streamed tile then serves those (up to two) products, so a call unpacks
// t_dim + rut_dim * ceil(t_dim / 2) tiles. The streamed register's two banks let the unpacker run one tile
// ahead of the FPU, no more; a reused operand of two tiles holds both banks of its register until the block's
// last product starts. So the FPU starts once the reused tiles and the first streamed tile are in, finishes
// no earlier than the last streamed tile's products after it arrives, and the next call's unpack waits for
// the banks to be released.
void Scheduler::charge_matmul(ComputeState& cs, int cb_in0, int cb_in1, int rt, int ct, uint64_t math_cycles) {
    Fiber& f = me();
    const bool reuse_in0 = ct >= rt;
    const uint64_t t_dim = uint64_t(reuse_in0 ? rt : ct), rut_dim = uint64_t(reuse_in0 ? ct : rt);
    const uint64_t streamed = rut_dim * ((t_dim + 1) / 2), uses = std::min<uint64_t>(t_dim, 2);
    const uint64_t reused_tile = tile_bytes(cb_of(reuse_in0 ? cb_in0 : cb_in1, "unpack").format);
    const uint64_t streamed_tile = tile_bytes(cb_of(reuse_in0 ? cb_in1 : cb_in0, "unpack").format);
    const uint64_t reused_bytes = t_dim * reused_tile, streamed_bytes = streamed * streamed_tile;
    // in1 goes to srcA (unpacker 0), in0 to srcB (unpacker 1).
    const uint64_t transfer = reuse_in0 ? unpack_transfer_cycles(streamed_bytes, reused_bytes)
                                        : unpack_transfer_cycles(reused_bytes, streamed_bytes);
    const uint64_t setup = timing::kUnpacrSetupCycles * timing::kUnpacrPerTileMatmul;
    // The transfer is shared out by bytes over the unpacker's in-order sequence: reused tiles, then streamed.
    const double per_byte = double(transfer) / double(reused_bytes + streamed_bytes);
    const uint64_t u_reused = uint64_t(per_byte * double(reused_bytes) + 0.5) + t_dim * setup;
    const uint64_t u_streamed = uint64_t(per_byte * double(streamed_tile) + 0.5) + setup;
    uint64_t& reused_free = reuse_in0 ? cs.srcb_free : cs.srca_free;
    uint64_t& streamed_free = reuse_in0 ? cs.srca_free : cs.srcb_free;

    const uint64_t unpack_start = std::max(cs.t_unpack + costs().llk_call, reused_free);
    const uint64_t first_in = std::max(unpack_start + u_reused, streamed_free) + u_streamed;
    const uint64_t unpack_end = first_in + (streamed - 1) * u_streamed;
    const uint64_t unpack_cycles = costs().llk_call + u_reused + streamed * u_streamed;
    cs.t_unpack = unpack_end;
    f.busy += unpack_cycles;
    cs.unpack_busy += unpack_cycles;
    counters_.unpack_busy_cycles += unpack_cycles;

    const uint64_t cycles = math_cycles + costs().llk_call;
    const uint64_t per_product = math_cycles / (uint64_t(rt) * uint64_t(ct));
    const uint64_t start = std::max(cs.t_math, first_in);
    const uint64_t end = std::max(start + cycles, unpack_end + uses * per_product);
    streamed_free = end - uses * per_product;
    reused_free = t_dim >= 2 ? end - per_product : start;
    cs.t_math = end;
    cs.math_busy += cycles;
    trace_span(start, end, f.call);
    counters_.fpu_busy_cycles += cycles;
    f.clock = std::max({cs.t_unpack, cs.t_math, cs.t_pack});
    yield_if_ahead();
}

void Scheduler::charge_math(ComputeState& cs, uint64_t cycles, bool fpu) {
    Fiber& f = me();
    cycles += costs().llk_call;
    // Math consumes what the unpacker delivered: it starts no earlier than the unpack finished.
    uint64_t start = std::max(cs.t_math, cs.t_unpack);
    if (fpu) {
        cs.srca_free = cs.srcb_free = start;
    } else {
        start = std::max(start, cs.t_sfpu);  // the pack thread may be using the SFPU
        cs.t_sfpu = start + cycles;
    }
    cs.t_math = start + cycles;
    cs.math_busy += cycles;
    trace_span(start, cs.t_math, f.call);
    if (fpu)
        counters_.fpu_busy_cycles += cycles;
    else
        counters_.sfpu_busy_cycles += cycles;
    f.clock = std::max({cs.t_unpack, cs.t_math, cs.t_pack});
    yield_if_ahead();
}

// ---------------------------------------------------------------- configuration

void Scheduler::charge_init(ComputeState& cs, bool unpack, bool math, bool pack) {
    const uint64_t c = costs().init_site;
    if (c == 0) return;
    Fiber& f = me();
    // A reprogrammed unpacker waits for the math thread to be done with the operands it holds, and the
    // packer's reconfiguration for the packs in flight: each thread takes the cost in its own order.
    if (unpack) cs.t_unpack += c, cs.unpack_busy += c, counters_.unpack_busy_cycles += c;
    if (math) cs.t_math += c, cs.math_busy += c;
    if (pack) cs.t_pack += c, cs.pack_busy += c, counters_.pack_busy_cycles += c;
    f.busy += c;
    f.clock = std::max({cs.t_unpack, cs.t_math, cs.t_pack});
}

void Scheduler::hw_startup(int cb_a, int cb_b, int cb_out) {
    ComputeState& cs = compute_state("compute_kernel_hw_startup");
    cb_of(cb_a, "compute_kernel_hw_startup");
    cb_of(cb_b, "compute_kernel_hw_startup");
    cb_of(cb_out, "compute_kernel_hw_startup");
    cs.started = true;
    cs.srca_cb = cb_a;
    cs.srcb_cb = cb_b;
    cs.pack_cb = cb_out;
    charge_init(cs, true, true, true);
}

void Scheduler::unpack_reconfig(int cb_a, int cb_b) {
    ComputeState& cs = compute_state("reconfig_data_format");
    if (cb_a >= 0) cs.srca_cb = (cb_of(cb_a, "reconfig_data_format"), cb_a);
    if (cb_b >= 0) cs.srcb_cb = (cb_of(cb_b, "reconfig_data_format"), cb_b);
    charge_init(cs, true, false, false);
}

void Scheduler::pack_reconfig(int cb_out) {
    ComputeState& cs = compute_state("pack_reconfig_data_format");
    cb_of(cb_out, "pack_reconfig_data_format");
    cs.pack_cb = cb_out;
    charge_init(cs, false, false, true);
}

void Scheduler::fpu_init(FpuOp op, Bcast bcast, int cb_a, int cb_b, uint32_t flags) {
    ComputeState& cs = compute_state("*_init");
    if (!cs.started && op != FpuOp::None) raise("FPU init: compute_kernel_hw_startup was not called first");
    if (cb_a >= 0) cb_of(cb_a, "FPU init");
    if (cb_b >= 0) cb_of(cb_b, "FPU init");
    cs.fpu_op = op;
    cs.bcast = bcast;
    cs.fpu_flags = flags;
    cs.init_cb_a = cb_a;
    cs.init_cb_b = cb_b;
    // An FPU init reprograms the unpacker, so the SFPU's own set-up stays but srcA/srcB follow the init.
    me().busy += timing::kApiCallCycles;
    charge_init(cs, true, true, false);
}

void Scheduler::sfpu_init(SfpuOp op) {
    ComputeState& cs = compute_state("SFPU init");
    cs.sfpu_op = op;
    cs.sfpu_setup_name.clear();
    cs.cumsum_carry_valid = false;
    charge_init(cs, false, true, false);
}

void Scheduler::sfpu_setup(const char* init_name, const uint32_t* init_params) {
    ComputeState& cs = compute_state(init_name);
    cs.sfpu_setup_name = init_name;
    cs.sfpu_setup_params.fill(0);
    if (init_params) std::copy(init_params, init_params + kSfpuMaxParams, cs.sfpu_setup_params.begin());
    cs.sfpu_op.reset();
    cs.cumsum_carry_valid = false;
    charge_init(cs, false, true, false);
}

// ---------------------------------------------------------------- DST protocol

void Scheduler::regs_acquire() {
    ComputeState& cs = compute_state("tile_regs_acquire");
    if (cs.dst_state != ComputeState::Dst::Free) {
        raise("tile_regs_acquire: DST is already held (each acquire needs commit, wait and release before the next)");
    }
    // Math gets the half of DST that the packer released two acquisitions ago.
    uint64_t freed = cs.release_time[cs.acquisitions % 2];
    if (freed > cs.t_math) {
        me().stall += freed - cs.t_math;
        cs.t_math = freed;
    }
    ++cs.acquisitions;
    cs.dst_state = ComputeState::Dst::Acquired;
}

void Scheduler::regs_commit() {
    ComputeState& cs = compute_state("tile_regs_commit");
    if (cs.dst_state != ComputeState::Dst::Acquired) raise("tile_regs_commit: DST was not acquired");
    cs.commit_time = cs.t_math;
    cs.dst_state = ComputeState::Dst::Committed;
}

void Scheduler::regs_wait() {
    ComputeState& cs = compute_state("tile_regs_wait");
    if (cs.dst_state != ComputeState::Dst::Committed) {
        raise("tile_regs_wait: math has not committed DST (call tile_regs_commit first)");
    }
    if (cs.commit_time > cs.t_pack) {
        me().stall += cs.commit_time - cs.t_pack;
        cs.t_pack = cs.commit_time;
    }
    cs.dst_state = ComputeState::Dst::Waited;
}

void Scheduler::regs_release() {
    ComputeState& cs = compute_state("tile_regs_release");
    if (cs.dst_state != ComputeState::Dst::Waited) {
        raise("tile_regs_release: the packer does not hold DST (call tile_regs_wait first)");
    }
    cs.release_time[(cs.acquisitions - 1) % 2] = cs.t_pack;
    // The packer clears the DST half it releases.
    if (!program_->timing_only) {
        for (auto& t : cs.dst) std::fill(t.begin(), t.end(), 0.0f);
    }
    cs.dst_state = ComputeState::Dst::Free;
}

// ---------------------------------------------------------------- FPU

void Scheduler::copy_tile(int cb, int tile, int dst) {
    ComputeState& cs = compute_state("copy_tile");
    require_math("copy_tile");
    require_dst_index(dst, "copy_tile");
    // unary_bcast_init configures the copy with a broadcast (B2D: srcB's column 0, row 0 or [0][0]).
    require_fpu_init(FpuOp::Copy, cs.bcast, "copy_tile");
    me().call = "copy_tile";
    // Integer words reach DST unchanged only in its 32-bit mode; 16-bit DST would round them as bf16.
    const DataFormat cb_format = cb_of(cb, "copy_tile").format;
    if ((cb_format == DataFormat::UInt32 || cb_format == DataFormat::Int32) && !me().spec->fp32_dest) {
        raise("copy_tile: CB " + std::to_string(cb) + " holds 32-bit integers, which need 32-bit DST (fp32_dest_acc_en)");
    }
    load_operand(cb, tile, cs.dst[dst].data(), /*fpu_operand=*/!unpacks_to_dest(cb, "copy_tile"), "copy_tile");
    if (cs.bcast != Bcast::None && !program_->timing_only) broadcast_in_place(cs.dst[dst], cs.bcast);
    finish_dst_write(dst);
    charge_unpack(cs, cb, 1, -1, 0);
    charge_math(cs, timing::kDatacopyTileCycles, true);
}

void Scheduler::binary_tiles(FpuOp op, Bcast bcast, int cb_a, int cb_b, int tile_a, int tile_b, int dst) {
    static const char* names[] = {"?", "?", "add_tiles", "sub_tiles", "mul_tiles"};
    const char* what = names[int(op) < 5 ? int(op) : 0];
    ComputeState& cs = compute_state(what);
    require_math(what);
    require_dst_index(dst, what);
    require_fpu_init(op, bcast, what);
    me().call = what;
    float a[TILE_ELEMS], b[TILE_ELEMS];
    // Dest reuse ({add,sub,mul}_reuse_dest_tiles): one operand is DST[dst] itself, moved into srcA
    // (bit 9) or srcB (bit 10) and so converted to the FPU operand format; only the CB tile is unpacked.
    constexpr uint32_t kReuseDestSrcA = 1u << 9, kReuseDestSrcB = 1u << 10;
    const bool reuse_a = cs.fpu_flags & kReuseDestSrcA, reuse_b = cs.fpu_flags & kReuseDestSrcB;
    if (reuse_a || reuse_b) {
        float* from_dst = reuse_a ? a : b;
        load_operand(cb_a, tile_a, reuse_a ? b : a, true, what);
        if (!program_->timing_only)
            for (int i = 0; i < TILE_ELEMS; ++i) from_dst[i] = to_fpu_operand(cs.dst[dst][i]);
    } else {
        load_operand(cb_a, tile_a, a, true, what);
        load_operand(cb_b, tile_b, b, true, what);
    }
    if (!program_->timing_only) {
        auto& d = cs.dst[dst];
        for (int r = 0; r < TILE_DIM; ++r) {
            for (int c = 0; c < TILE_DIM; ++c) {
                float bv;
                switch (bcast) {
                    case Bcast::Col: bv = b[r * TILE_DIM]; break;
                    case Bcast::Row: bv = b[c]; break;
                    case Bcast::Scalar: bv = b[0]; break;
                    default: bv = b[r * TILE_DIM + c];
                }
                float av = a[r * TILE_DIM + c];
                float v = op == FpuOp::Add ? av + bv : op == FpuOp::Sub ? av - bv : av * bv;
                d[r * TILE_DIM + c] = v;
            }
        }
        finish_dst_write(dst);
    }
    // Eltwise: in0 to srcA (unpacker 0), in1 to srcB (unpacker 1); dest reuse unpacks only in0.
    charge_unpack(cs, cb_a, 1, cb_b, reuse_a || reuse_b ? 0 : 1);
    uint64_t phases = op == FpuOp::Mul ? uint64_t(fidelity_phases(me().spec->fidelity)) : 1;
    charge_math(cs, timing::kEltwiseTileCyclesPerPhase * phases, true);
}

void Scheduler::matmul_block(int cb_a, int cb_b, int tile_a, int tile_b, int dst, int transpose, int ct, int rt,
                             int kt) {
    const char* what = "matmul_tiles/matmul_block";
    ComputeState& cs = compute_state(what);
    require_math(what);
    require_fpu_init(FpuOp::Matmul, Bcast::None, what);
    me().call = what;
    if (ct <= 0 || rt <= 0 || kt <= 0) raise(std::string(what) + ": block dimensions must be positive");
    require_dst_index(dst, what);
    require_dst_index(dst + rt * ct - 1, what);
    bool tr = transpose < 0 ? (cs.fpu_flags & 1u) : transpose != 0;
    Fiber& f = me();
    // An init may set its own fidelity (the *_fidelity matmul inits): bits 12-15 hold it plus one.
    const uint32_t fidelity_override = (cs.fpu_flags >> 12) & 0xFu;
    const MathFidelity fidelity = fidelity_override ? MathFidelity(fidelity_override - 1) : f.spec->fidelity;
    float a[TILE_ELEMS], b[TILE_ELEMS];
    for (int r = 0; r < rt; ++r) {
        load_operand(cb_a, tile_a + r * kt, a, true, what);
        for (int c = 0; c < ct; ++c) {
            load_operand(cb_b, tile_b + c, b, true, what);
            if (!program_->timing_only) {
                matmul_tile_acc(a, b, cs.dst[dst + r * ct + c].data(), fidelity, tr);
                finish_dst_write(dst + r * ct + c);
            }
        }
    }
    // Unpack and math of the block's K step: charge_matmul (which operand is reused follows tt-llk).
    uint64_t tiles = uint64_t(rt) * ct;
    counters_.matmul_tiles += tiles;
    counters_.fpu_flops += tiles * 2ull * TILE_DIM * TILE_DIM * TILE_DIM;
    const uint64_t ideal = tiles * timing::kMatmulTileCyclesPerPhase * fidelity_phases(fidelity);
    charge_matmul(cs, cb_a, cb_b, rt, ct, ideal + uint64_t(double(ideal) * costs().matmul_tile_extra + 0.5));
}

void Scheduler::reduce_tile(int pool, int dim, int cb, int cb_scaler, int tile, int tile_scaler, int dst) {
    const char* what = "reduce_tile";
    ComputeState& cs = compute_state(what);
    require_math(what);
    require_dst_index(dst, what);
    require_fpu_init(FpuOp::Reduce, Bcast::None, what);
    me().call = what;
    if (cs.fpu_flags != (uint32_t(pool) | (uint32_t(dim) << 4))) {
        raise("reduce_tile: its pool type / dimension differ from the ones reduce_init configured");
    }
    float x[TILE_ELEMS], s[TILE_ELEMS];
    load_operand(cb, tile, x, true, what);
    load_operand(cb_scaler, tile_scaler, s, true, what);
    if (!program_->timing_only) {
        auto& d = cs.dst[dst];
        const float scale = s[0];
        // PoolType: SUM 0 and AVG 1 add (AVG's 1/n is the scaler the kernel passes), MAX 2, MIN 3.
        const bool is_max = pool == 2, is_min = pool == 3;
        auto combine = [is_max, is_min](float acc, float v) {
            return is_max ? std::max(acc, v) : is_min ? std::min(acc, v) : acc + v;
        };
        if (dim == 0) {  // REDUCE_ROW: each row to column 0
            for (int r = 0; r < TILE_DIM; ++r) {
                float acc = is_max ? -INFINITY : is_min ? INFINITY : 0.0f;
                for (int c = 0; c < TILE_DIM; ++c) acc = combine(acc, x[r * TILE_DIM + c]);
                d[r * TILE_DIM] = combine(d[r * TILE_DIM], acc * scale);
            }
        } else if (dim == 1) {  // REDUCE_COL: each column to row 0
            for (int c = 0; c < TILE_DIM; ++c) {
                float acc = is_max ? -INFINITY : is_min ? INFINITY : 0.0f;
                for (int r = 0; r < TILE_DIM; ++r) acc = combine(acc, x[r * TILE_DIM + c]);
                d[c] = combine(d[c], acc * scale);
            }
        } else {  // REDUCE_SCALAR
            float acc = is_max ? -INFINITY : is_min ? INFINITY : 0.0f;
            for (int i = 0; i < TILE_ELEMS; ++i) acc = combine(acc, x[i]);
            d[0] = combine(d[0], acc * scale);
        }
        finish_dst_write(dst);
    }
    charge_unpack(cs, cb, 1, cb_scaler, 1);
    charge_math(cs, timing::kReduceTileCycles * (dim == 2 ? 2 : 1), true);
}

void Scheduler::transpose_tile(int cb, int tile, int dst) {
    const char* what = "transpose_tile";
    ComputeState& cs = compute_state(what);
    require_math(what);
    require_dst_index(dst, what);
    require_fpu_init(FpuOp::Transpose, Bcast::None, what);
    me().call = what;
    float x[TILE_ELEMS];
    load_operand(cb, tile, x, !unpacks_to_dest(cb, what), what);
    if (!program_->timing_only) {
        auto& d = cs.dst[dst];
        for (int r = 0; r < TILE_DIM; ++r)
            for (int c = 0; c < TILE_DIM; ++c) d[c * TILE_DIM + r] = x[r * TILE_DIM + c];
        finish_dst_write(dst);
    }
    charge_unpack(cs, cb, 1, -1, 0);
    charge_math(cs, timing::kDatacopyTileCycles, true);
}

// ---------------------------------------------------------------- layout conversion

namespace {
// Bytes of one element of a row-major page. Only formats whose elements stand alone have a row-major
// form: Bfp8_b shares one exponent per 16 values of a face row, so it exists in tiles only.
uint32_t datum_bytes(DataFormat f) {
    switch (f) {
        case DataFormat::Float32:
        case DataFormat::UInt32: return 4;
        case DataFormat::Float16_b: return 2;
        default: return 0;
    }
}
float read_datum(DataFormat f, const uint8_t* p) {
    if (f == DataFormat::Float16_b) {
        uint16_t b;
        std::memcpy(&b, p, 2);
        return bf16_from_bits(b);
    }
    float v;
    std::memcpy(&v, p, 4);
    return v;
}
// Float16_b rounds to nearest even as pack_tile does; Float32 and UInt32 words are stored unchanged.
void write_datum(DataFormat f, float v, uint8_t* p) {
    if (f == DataFormat::Float16_b) {
        const uint16_t b = bf16_bits(v);
        std::memcpy(p, &b, 2);
    } else {
        std::memcpy(p, &v, 4);
    }
}
}  // namespace

// tilize_block's unpacker: the CB's front pages hold row-major rows of block_ct * 32 elements (the
// reader pushes block_ct pages per 32 rows); tile tile_index is the 32x32 square at 32-row band
// tile_index / block_ct, tile column tile_index % block_ct. Values reach DST as copy_tile's do.
void Scheduler::tilize_tile(int cb, int tile_index, int block_ct, int dst) {
    const char* what = "tilize_block";
    ComputeState& cs = compute_state(what);
    require_math(what);
    require_dst_index(dst, what);
    require_fpu_init(FpuOp::Tilize, Bcast::None, what);
    me().call = what;
    if (block_ct <= 0 || tile_index < 0) raise("tilize_block: the block must be at least one tile wide");
    CircularBuffer& c = cb_of(cb, what);
    const uint32_t datum = datum_bytes(c.format);
    if (datum == 0) raise("tilize_block: CB " + std::to_string(cb) + "'s format has no row-major form (Bfp8_b is tiled only)");
    const uint64_t row_bytes = uint64_t(block_ct) * TILE_DIM * datum;
    const int band = tile_index / block_ct, col_tile = tile_index % block_ct;
    const uint64_t end = (uint64_t(band) + 1) * TILE_DIM * row_bytes;  // the last byte this tile needs
    const int last_page = int((end + c.page_size - 1) / c.page_size) - 1;
    front_tile(cb, last_page, what);  // the pages must all be at the front, without wrapping the CB
    if (!program_->timing_only) {
        const uint8_t* base = front_tile(cb, 0, what);
        auto& d = cs.dst[dst];
        const bool fpu_operand = !unpacks_to_dest(cb, what);
        for (int r = 0; r < TILE_DIM; ++r) {
            const uint8_t* row = base + (uint64_t(band) * TILE_DIM + r) * row_bytes + uint64_t(col_tile) * TILE_DIM * datum;
            for (int k = 0; k < TILE_DIM; ++k) {
                const float v = read_datum(c.format, row + k * datum);
                d[r * TILE_DIM + k] = fpu_operand && c.format == DataFormat::Float32 ? to_fpu_operand(v) : v;
            }
        }
        finish_dst_write(dst);
    }
    // The unpacker reads the tile's 32 rows of 32 elements: the same bytes as a tile of the format.
    charge_unpack(cs, cb, 1, -1, 0);
    charge_math(cs, timing::kDatacopyTileCycles, true);
}

// pack_untilize's packer: DST tiles dst .. dst + block_ct - 1 become 32 rows of the row-major image
// reserved at the CB's back (rows full_ct * 32 elements long), at tile columns col_tile ...; the
// packer writes at the write pointer itself, not at pack_tile's next page.
void Scheduler::pack_untilize(int cb, int dst, int block_ct, int full_ct, int col_tile) {
    const char* what = "pack_untilize";
    ComputeState& cs = compute_state(what);
    me().call = what;
    if (cs.dst_state != ComputeState::Dst::Waited) {
        raise("pack_untilize: the packer does not hold DST (tile_regs_commit, then tile_regs_wait, before packing)");
    }
    if (block_ct <= 0 || col_tile < 0 || col_tile + block_ct > full_ct) {
        raise("pack_untilize: tile columns " + std::to_string(col_tile) + ".." + std::to_string(col_tile + block_ct - 1) +
              " are not inside a row of " + std::to_string(full_ct) + " tiles");
    }
    require_dst_index(dst, what);
    require_dst_index(dst + block_ct - 1, what);
    CircularBuffer& c = cb_of(cb, what);
    if (cs.pack_cb != cb && cb_of(cs.pack_cb, what).format != c.format) {
        raise("pack_untilize: CB " + std::to_string(cb) + " has a different data format from the packer's configuration (CB " +
              std::to_string(cs.pack_cb) + "); call pack_reconfig_data_format first");
    }
    if (cs.pack_l1_acc) raise("pack_untilize: not modeled by the simulator with packer L1 accumulation on");
    if (cs.pack_relu) raise("pack_untilize: not modeled by the simulator with the packer's ReLU on");
    const uint32_t datum = datum_bytes(c.format);
    if (datum == 0) raise("pack_untilize: CB " + std::to_string(cb) + "'s format has no row-major form (Bfp8_b is tiled only)");
    const uint64_t row_bytes = uint64_t(full_ct) * TILE_DIM * datum;
    if (TILE_DIM * row_bytes > uint64_t(c.reserved) * c.page_size) {
        raise("pack_untilize: 32 rows of " + std::to_string(full_ct) + " tiles need " + std::to_string(TILE_DIM * row_bytes) +
              " bytes of CB " + std::to_string(cb) + ", more than the " + std::to_string(c.reserved) +
              " pages reserved (cb_reserve_back first)");
    }
    if (uint64_t(c.write_slot()) * c.page_size + TILE_DIM * row_bytes > uint64_t(c.num_pages) * c.page_size) {
        raise("pack_untilize: the rows would be written past the end of CB " + std::to_string(cb));
    }
    if (!program_->timing_only) {
        uint8_t* base = me().core->l1 + c.l1_offset + size_t(c.write_slot()) * c.page_size;
        for (int t = 0; t < block_ct; ++t) {
            const auto& d = cs.dst[dst + t];
            for (int r = 0; r < TILE_DIM; ++r) {
                uint8_t* row = base + uint64_t(r) * row_bytes + uint64_t(col_tile + t) * TILE_DIM * datum;
                for (int k = 0; k < TILE_DIM; ++k) write_datum(c.format, d[r * TILE_DIM + k], row + k * datum);
            }
        }
    }
    const uint64_t bytes = uint64_t(block_ct) * TILE_ELEMS * datum;
    const uint64_t cycles = (bytes + timing::kPackBytesPerCycle - 1) / timing::kPackBytesPerCycle + costs().llk_call;
    cs.t_pack += cycles;
    me().busy += cycles;
    cs.pack_busy += cycles;
    counters_.pack_busy_cycles += cycles;
    me().clock = std::max({cs.t_unpack, cs.t_math, cs.t_pack});
}

// transpose_dest: math moves the tile to srcB and back transposed (MOVD2B / MOVB2D), so the cost is two
// datacopies (not measured). With 32-bit DST the values must move whole (is_32bit); the 16-bit move of
// 32-bit values is not modeled.
void Scheduler::transpose_dest(int dst, bool of_faces, bool values_32bit) {
    const char* what = "transpose_dest";
    ComputeState& cs = compute_state(what);
    require_math(what);
    require_dst_index(dst, what);
    me().call = what;
    if (me().spec->fp32_dest && !values_32bit) {
        raise("transpose_dest: DST holds 32-bit values (fp32_dest_acc_en) but is_32bit is false; not modeled by the simulator");
    }
    if (!program_->timing_only) {
        auto& d = cs.dst[dst];
        std::array<float, TILE_ELEMS> t = d;
        for (int r = 0; r < TILE_DIM; ++r) {
            for (int c = 0; c < TILE_DIM; ++c) {
                // Within a face (fr, fc) the element moves from (r, c) to (c, r) of that face; with of_faces
                // the faces trade places across the diagonal too, which is the full 32x32 transpose.
                const int fr = r / FACE_DIM, fc = c / FACE_DIM, ir = r % FACE_DIM, ic = c % FACE_DIM;
                const int tr = of_faces ? c : fr * FACE_DIM + ic, tc = of_faces ? r : fc * FACE_DIM + ir;
                d[tr * TILE_DIM + tc] = t[r * TILE_DIM + c];
            }
        }
    }
    charge_math(cs, 2 * timing::kDatacopyTileCycles, true);
}

// ---------------------------------------------------------------- SFPU
//
// The SFPU functions are elementwise functions the kernel headers define, applied by sfpu_eltwise.
// The SfpuOp ops are the ones that are not elementwise: cumsum (totals carried from call to call) and
// the pack thread's exp (charged to the packer's clock). Broadcast inputs (a row, a column or an element
// of another tile) are elementwise functions with SfpuElementwise::broadcast.

namespace {
// cumsum_tile: each column's running total, top row to bottom row, in fp32, continuing from the totals
// the previous call left unless `first` (api/compute/cumsum.h: tiles of one column come in order).
void cumsum_columns(std::array<float, TILE_ELEMS>& d, std::array<float, TILE_DIM>& carry, bool first) {
    if (first) carry.fill(0.0f);
    for (int r = 0; r < TILE_DIM; ++r) {
        for (int c = 0; c < TILE_DIM; ++c) {
            carry[c] += d[r * TILE_DIM + c];
            d[r * TILE_DIM + c] = carry[c];
        }
    }
}

const char* sfpu_op_name(SfpuOp op) {
    switch (op) {
        case SfpuOp::Exp: return "exp_packthread_tile";
        case SfpuOp::Cumsum: return "cumsum_tile";
        case SfpuOp::Count: break;
    }
    return "?";
}

// The face (0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right) of element i of a row-major tile.
int face_of(int i) { return (i / TILE_DIM / 16) * 2 + (i % TILE_DIM) / 16; }
uint64_t face_count(uint32_t faces) { return uint64_t(__builtin_popcount(faces & 0xFu)); }

uint64_t sfpu_op_cost(SfpuOp op, bool approx) {
    if (op == SfpuOp::Exp) return approx ? timing::kSfpuExpApproxTileCycles : timing::kSfpuExpTileCycles;
    return timing::kSfpuSimpleTileCycles;
}
}  // namespace

void Scheduler::sfpu_unary(SfpuOp op, int dst, uint32_t p0, uint32_t, uint32_t) {
    const char* what = sfpu_op_name(op);
    ComputeState& cs = compute_state(what);
    me().call = what;
    require_math(what);
    require_dst_index(dst, what);
    if (op != SfpuOp::Cumsum) raise(std::string(what) + " is not a unary SFPU op on the math thread");
    if (!cs.sfpu_op || *cs.sfpu_op != op) raise("cumsum_tile called without cumsum_tile_init");
    if (p0 == 0 && !cs.cumsum_carry_valid) {
        raise("cumsum_tile(first=false): the running totals are gone (an SFPU init or another SFPU op ran since "
              "the previous cumsum_tile, or there was none); start the column with first=true");
    }
    if (!program_->timing_only) cumsum_columns(cs.dst[dst], cs.cumsum_carry, p0 != 0);
    cs.cumsum_carry_valid = true;
    finish_dst_write(dst);
    charge_math(cs, sfpu_op_cost(op, me().spec->approx), false);
}

void Scheduler::sfpu_init_on_pack(SfpuOp op, uint32_t scale) {
    ComputeState& cs = compute_state("exp_packthread_tile_init");
    cs.pack_sfpu_op = op;
    cs.pack_sfpu_scale = scale;
    charge_init(cs, false, false, true);
}

// exp_packthread_tile: the pack thread runs the SFPU on DST while it holds DST (between tile_regs_wait
// and tile_regs_release), so the exp overlaps the math thread's next matmuls; it takes the packer's
// time and the shared SFPU's.
void Scheduler::sfpu_unary_on_pack(SfpuOp op, int dst, uint32_t p0, uint32_t approx, uint32_t faces) {
    const char* what = "exp_packthread_tile";
    ComputeState& cs = compute_state(what);
    me().call = what;
    if (cs.dst_state != ComputeState::Dst::Waited) {
        raise("exp_packthread_tile: the pack thread holds DST only between tile_regs_wait and tile_regs_release");
    }
    require_dst_index(dst, what);
    if (op != SfpuOp::Exp) raise("only exp runs on the pack thread");
    if (!cs.pack_sfpu_op || *cs.pack_sfpu_op != op) raise("exp_packthread_tile called without exp_packthread_tile_init");
    if (!program_->timing_only) {
        // As exp_tile: the approximate path applies the init's scale, the accurate one the call's.
        const float scale = bits_to_float(approx ? cs.pack_sfpu_scale : p0);
        auto& d = cs.dst[dst];
        for (int i = 0; i < TILE_ELEMS; ++i) {
            if (faces >> face_of(i) & 1u) d[i] = std::exp(d[i] * scale);
        }
        finish_dst_write(dst);
    }
    const uint64_t cycles = sfpu_op_cost(op, me().spec->approx) * face_count(faces) / 4;
    const uint64_t start = std::max(cs.t_pack, cs.t_sfpu);
    trace_span(start, start + cycles, what);
    cs.t_pack = cs.t_sfpu = start + cycles;
    cs.pack_busy += cycles;
    counters_.sfpu_busy_cycles += cycles;
    me().busy += cycles;
    me().clock = std::max({cs.t_unpack, cs.t_math, cs.t_pack});
}

// A generic SFPU function (kernel_api.h SfpuElementwise): all inputs are read before the output is
// written, so an output tile may also be an input. Cost: the op's tile figure times the share of faces.
void Scheduler::sfpu_eltwise(const SfpuElementwise& op, const int* in_dst, int n_in, int out_dst, uint32_t faces,
                             const uint32_t* params) {
    ComputeState& cs = compute_state(op.name);
    me().call = op.name;
    require_math(op.name);
    if (n_in < 1 || n_in > kSfpuMaxInputs) raise(std::string(op.name) + ": bad number of DST inputs");
    for (int k = 0; k < n_in; ++k) require_dst_index(in_dst[k], op.name);
    require_dst_index(out_dst, op.name);
    if (cs.sfpu_setup_name != op.init_name) {
        raise(std::string(op.name) + " called without its init (it needs the SFPU set up for " + op.init_name +
              ", which was last set up for " +
              (cs.sfpu_setup_name.empty() ? std::string(cs.sfpu_op ? "another operation" : "nothing") : cs.sfpu_setup_name) +
              ")");
    }
    if (op.integer_result && !me().spec->fp32_dest) {
        raise(std::string(op.name) + ": an integer result needs 32-bit DST (set fp32_dest_acc_en)");
    }
    cs.cumsum_carry_valid = false;
    if (!program_->timing_only) {
        std::array<uint32_t, TILE_ELEMS> out;
        uint32_t in[kSfpuMaxInputs];
        uint32_t all_params[2 * kSfpuMaxParams];
        std::copy(params, params + kSfpuMaxParams, all_params);
        std::copy(cs.sfpu_setup_params.begin(), cs.sfpu_setup_params.end(), all_params + kSfpuMaxParams);
        for (int i = 0; i < TILE_ELEMS; ++i) {
            if (!(faces >> face_of(i) & 1u)) continue;
            for (int k = 0; k < n_in; ++k) {
                int at = i;
                switch (SfpuBroadcast((op.broadcast >> (2 * k)) & 3u)) {
                    case SfpuBroadcast::Col: at = (i / TILE_DIM) * TILE_DIM; break;
                    case SfpuBroadcast::Row: at = i % TILE_DIM; break;
                    case SfpuBroadcast::Scalar: at = 0; break;
                    case SfpuBroadcast::None: break;
                }
                std::memcpy(&in[k], &cs.dst[in_dst[k]][at], 4);
            }
            out[i] = op.fn(in, all_params);
        }
        auto& d = cs.dst[out_dst];
        for (int i = 0; i < TILE_ELEMS; ++i) {
            if (faces >> face_of(i) & 1u) std::memcpy(&d[i], &out[i], 4);
        }
        if (!op.integer_result) finish_dst_write(out_dst);
    }
    charge_math(cs, op.tile_cycles * face_count(faces) / 4, false);
}

// Raw SFPI code (sfpi.h): the emulation works on copies of the DST tiles it addresses. Reads and writes
// follow the DST protocol of any SFPU call; the cost is the emulation's instruction count.
void Scheduler::sfpu_dst_read(const char* call, int dst, uint32_t* words) {
    ComputeState& cs = compute_state(call);
    me().call = call;
    require_math(call);
    require_dst_index(dst, call);
    std::memcpy(words, cs.dst[dst].data(), TILE_ELEMS * 4);
}

void Scheduler::sfpu_dst_write(const char* call, int dst, const uint32_t* words) {
    ComputeState& cs = compute_state(call);
    me().call = call;
    require_math(call);
    require_dst_index(dst, call);
    cs.cumsum_carry_valid = false;
    if (program_->timing_only) return;
    std::memcpy(cs.dst[dst].data(), words, TILE_ELEMS * 4);
    finish_dst_write(dst);
}

void Scheduler::sfpu_charge(const char* call, uint64_t cycles) {
    ComputeState& cs = compute_state(call);
    me().call = call;
    require_math(call);
    charge_math(cs, cycles, false);
}

// ---------------------------------------------------------------- packer

// A pack past the pages the kernel holds reserved. On the device the packer writes at the CB's write
// pointer plus the tile index whatever the counters say (cb_reserve_back only waits for room), so the
// question is only whose data the page holds. Legal, because nothing else can read or write the page:
//  * a page never used since the program started;
//  * a page this kernel itself popped (tt-metal's sdpa matmul_reduce pops a block and packs its
//    result into the freed pages before pushing them);
//  * a page still in the CB that this kernel waited for as its consumer (the in-place blocks: pack
//    over the tiles just unpacked, then pop, reserve and push them);
//  * a page this kernel pushed itself and that no other kernel consumes (L1 accumulation onto its
//    own intermediate); a later wait or pop by another kernel is then a fault (check_rewritten_pages).
// Anything else can overwrite data another kernel has not read, or a page whose pop nothing orders
// before this pack, and is a fault.
void Scheduler::check_pack_outside_reservation(int cb, uint32_t index) {
    CircularBuffer& c = cb_of(cb, "pack_tile");
    const KernelSpec* self = me().spec;
    auto who = [](const KernelSpec* k) {
        return k ? std::string(role_name(k->role)) + " kernel " + k->name : std::string("another kernel");
    };
    const std::string tile = "pack_tile: output tile " + std::to_string(index) + " of CB " + std::to_string(cb) +
                             " is past the " + std::to_string(c.reserved) + " pages reserved";
    if (c.write_slot() + uint64_t(index) >= c.num_pages) {
        raise(tile + " and past the CB's end (cb_reserve_back first)");
    }
    const uint64_t seq = c.pushed + index;  // the page number the packed tile would be pushed as
    const uint32_t slot = uint32_t(seq % c.num_pages);
    if (seq < c.popped + c.num_pages) {  // the slot holds no page of the CB now
        if (seq < c.num_pages || c.pop_by[slot] == self) return;
        raise(tile + ", on a page " + who(c.pop_by[slot]) + " popped: nothing orders that pop before this pack on "
                     "the device (cb_reserve_back first)");
    }
    const uint64_t page = seq - c.num_pages;  // the page the slot holds, pushed and not yet popped
    if (page < c.waited && c.consumer == self) return;
    if (c.push_by[slot] == self && (c.consumer == nullptr || c.consumer == self)) {
        c.rewritten_by[slot] = self;
        return;
    }
    raise(tile + ", over page " + std::to_string(page) + " which " + who(c.push_by[slot]) +
          " pushed and which has not been popped" + (c.consumer ? " (consumer: " + who(c.consumer) + ")" : std::string()) +
          ": the pack would overwrite data not yet read (cb_reserve_back first)");
}

void Scheduler::pack_tile(int dst, int cb, int out_index, bool out_of_order) {
    const char* what = "pack_tile";
    ComputeState& cs = compute_state(what);
    if (cs.dst_state != ComputeState::Dst::Waited) {
        raise("pack_tile: the packer does not hold DST (tile_regs_commit, then tile_regs_wait, before packing)");
    }
    require_dst_index(dst, what);
    CircularBuffer& c = cb_of(cb, what);
    if (cs.pack_cb != cb && cb_of(cs.pack_cb, what).format != c.format) {
        raise("pack_tile: CB " + std::to_string(cb) + " has a different data format from the packer's configuration (CB " +
              std::to_string(cs.pack_cb) + "); call pack_reconfig_data_format first");
    }
    uint32_t index = out_of_order ? uint32_t(out_index) : c.pack_cursor++;
    if (index >= c.reserved) check_pack_outside_reservation(cb, index);
    uint32_t slot = c.write_slot() + index;
    if (c.l1_offset + uint64_t(slot + 1) * c.page_size > kL1Bytes)  // a block crossing the CB's end writes on
        raise("pack_tile: output tile would be written past the end of L1");
    if (!program_->timing_only) {
        uint8_t* out = me().core->l1 + c.l1_offset + size_t(slot) * c.page_size;
        // The packer's pipeline (tt-isa-documentation, WormholeB0 Packers): ReLU acts on the datums read
        // from DST, shortly after the early format conversion; accumulation (L1 += datum) is the write
        // into L1 at the pipeline's end. So with both on, L1 += max(DST, 0): the sum is not clamped
        // (the order is inferred from the pipeline description, not measured).
        std::array<float, TILE_ELEMS> datums = cs.dst[dst];
        if (cs.pack_relu) {
            for (float& v : datums) v = v > 0.0f ? v : 0.0f;
        }
        if (cs.pack_l1_acc) {
            // L1 accumulation: the packer reads the destination tile back (decoded exactly), adds the
            // datums in fp32 and writes the sum in the CB's format, rounding as any pack does.
            std::array<float, TILE_ELEMS> sum;
            ttsim::unpack_tile(c.format, out, sum.data());
            for (int i = 0; i < TILE_ELEMS; ++i) sum[i] += datums[i];
            ttsim::pack_tile(c.format, sum.data(), out);
        } else {
            ttsim::pack_tile(c.format, datums.data(), out);
        }
    }
    uint64_t cycles = (tile_bytes(c.format) + timing::kPackBytesPerCycle - 1) / timing::kPackBytesPerCycle +
                      costs().llk_call;
    cs.t_pack += cycles;
    me().busy += cycles;
    cs.pack_busy += cycles;
    counters_.pack_busy_cycles += cycles;
    me().clock = std::max({cs.t_unpack, cs.t_math, cs.t_pack});
}

void Scheduler::zone_begin(const char* name) {
    Fiber& f = me();
    const ComputeState* cs = f.compute.get();
    f.zones.push_back({name, f.clock, cs ? cs->unpack_busy : 0, cs ? cs->math_busy : 0, cs ? cs->pack_busy : 0, f.busy});
}

void Scheduler::zone_end() {
    Fiber& f = me();
    if (f.zones.empty()) raise("profiler zone closed that was never opened");
    const Fiber::ZoneMark m = f.zones.back();
    f.zones.pop_back();
    const ComputeState* cs = f.compute.get();
    ZoneTotals& z = zone_totals_[m.name];
    ++z.entries;
    z.elapsed += f.clock - m.clock;
    if (cs) {
        z.unpack += cs->unpack_busy - m.unpack;
        z.math += cs->math_busy - m.math;
        z.pack += cs->pack_busy - m.pack;
    }
    z.busy += f.busy - m.busy;
}

void Scheduler::pack_l1_acc(bool enable) {
    ComputeState& cs = compute_state("pack_reconfig_l1_acc");
    cs.pack_l1_acc = enable;
}

void Scheduler::pack_relu(bool enable) {
    ComputeState& cs = compute_state("pack_relu_config");
    cs.pack_relu = enable;
}

}  // namespace ttsim
