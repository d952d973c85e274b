// SFPI for the simulator: enough of the SFPU's C++ vector interface (tenstorrent/sfpi) to run raw SFPI
// code a kernel carries itself (tt-metal's sdpa: sdpa_max_sfpi, the *_first_column helpers), written
// from the documented semantics (tt-isa-documentation's SFPLOAD/SFPSTORE, LReg, VectorUnit pages).
//
// A vFloat / vInt is one SFPU register: 32 lanes of 32 bits. sfpi::dst_reg[i] addresses DST as SFPLOAD
// does: address a = base + 2 * (counter + i) in DST rows (16 datums each; a tile is 64 rows, face f
// rows 16f..16f+15); lane L reads row (a & ~3) + L / 8, column 2 * (L % 8), plus one when a & 2. So
// dst_reg[0] is the even columns of a face's rows 0-3, dst_reg[1] their odd columns, and the 8 indices
// a face loop walks cover its 16 rows. v_if / v_elseif / v_else / v_endif keep a lane-mask stack:
// every lane runs every statement, and assignments and DST stores land only where the mask is on.
//
// The code runs inside the simulator's SFPU drivers (_llk_math_eltwise_*_sfpu_params_ below), which
// set the DST base per face, fetch the tiles the code touches (KernelApi::sfpu_dst_read), write the
// stored ones back and charge the instructions counted here (ttsim/sfpu_cost.h kSfpiInstruction per
// 32-lane instruction, an estimate). Anything of SFPI not here fails to compile, by name.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ckernel_defs.h"
#include "ttsim/common.h"
#include "ttsim/sfpu_cost.h"

namespace ttsim::sfpi_emu {

constexpr int kLanes = 32;
constexpr int kTileRows = 64;      // DST rows (of 16 datums) a 32x32 tile takes
constexpr int kMaxDstTiles = 16;   // DST's tiles at most (16-bit, full sync)

struct Lanes {
    bool on[kLanes];
};

// One driver call's state: the DST tiles it fetched, the base row, the counter, the lane masks.
struct State {
    const char* call = nullptr;        // the API call running raw SFPI, for messages
    bool active = false;
    uint32_t words[kMaxDstTiles][1024];
    bool loaded[kMaxDstTiles];
    bool dirty[kMaxDstTiles];
    int base_row = 0;                  // DST row of the current face's start (the driver sets it)
    int counter = 0;                   // dst_reg's advance within the face, in dst_reg units
    uint64_t instructions = 0;         // 32-lane instructions executed, for the cost
    Lanes mask;                        // lanes enabled now
    static constexpr int kDepth = 8;
    struct Frame { Lanes parent, taken; } stack[kDepth];
    int depth = 0;
};
inline thread_local State state;

inline State& st() {
    if (!state.active) TTSIM->fail("sfpi", "raw SFPI code outside an SFPU driver call (_llk_math_eltwise_*_sfpu_params_)");
    return state;
}
inline void count(uint64_t n = 1) { state.instructions += n; }

// Where lane `lane` of DST address `addr` lands: tile index and its row-major element.
inline void locate(int addr, int lane, int& tile, int& elem) {
    const int row = (addr & ~3) + lane / 8;
    const int col = (lane % 8) * 2 + ((addr & 2) ? 1 : 0);
    tile = row / kTileRows;
    const int r64 = row % kTileRows, face = r64 / 16, fr = r64 % 16;
    elem = ((face / 2) * 16 + fr) * 32 + (face % 2) * 16 + col;
}
inline uint32_t* tile_words(int tile) {
    State& s = st();
    if (tile < 0 || tile >= kMaxDstTiles) TTSIM->fail(s.call, "raw SFPI code addressed DST past its 16 tiles");
    if (!s.loaded[tile]) {
        TTSIM->sfpu_dst_read(s.call, tile, s.words[tile]);
        s.loaded[tile] = true;
    }
    return s.words[tile];
}

// A 16-bit DST keeps bf16: a store rounds (to nearest even), so a later load sees what DST holds.
inline uint32_t dst_store_word(uint32_t w) {
    if (DST_ACCUM_MODE) return w;
    if ((w & 0x7F800000u) == 0x7F800000u) {  // inf stays inf; a NaN whose payload is all low bits stays a NaN
        const bool nan_lost = (w & 0xFFFFu) && !(w & 0x007F0000u);
        return (w & 0xFFFF0000u) | (nan_lost ? 0x00400000u : 0u);
    }
    return (w + 0x7FFFu + ((w >> 16) & 1u)) & 0xFFFF0000u;
}

}  // namespace ttsim::sfpi_emu

namespace sfpi {

using ttsim::sfpi_emu::kLanes;

// A lane condition (the result of a comparison), consumed by v_if / v_elseif / v_and.
struct vCond {
    bool on[kLanes];
    vCond operator&&(const vCond& o) const { vCond r; for (int i = 0; i < kLanes; ++i) r.on[i] = on[i] && o.on[i]; return r; }
    vCond operator||(const vCond& o) const { vCond r; for (int i = 0; i < kLanes; ++i) r.on[i] = on[i] || o.on[i]; return r; }
    vCond operator!() const { vCond r; for (int i = 0; i < kLanes; ++i) r.on[i] = !on[i]; return r; }
};

class vFloat {
public:
    float v[kLanes];
    vFloat() { for (float& x : v) x = 0.0f; }
    vFloat(float f) { for (float& x : v) x = f; }  // SFPLOADI of an immediate
    vFloat(const vFloat& o) = default;             // a new register: its every lane written
    // Assignment to an existing register: only the enabled lanes change (the SFPU's lane enable).
    vFloat& operator=(const vFloat& o) {
        const auto& s = ttsim::sfpi_emu::st();
        for (int i = 0; i < kLanes; ++i)
            if (s.mask.on[i]) v[i] = o.v[i];
        ttsim::sfpi_emu::count();
        return *this;
    }
    vFloat& operator=(float f) { return *this = vFloat(f); }
    vFloat& operator+=(const vFloat& o) { return *this = *this + o; }
    vFloat& operator-=(const vFloat& o) { return *this = *this - o; }
    vFloat& operator*=(const vFloat& o) { return *this = *this * o; }

    template <typename F>
    static vFloat map(const vFloat& a, const vFloat& b, F f) {
        vFloat r;
        for (int i = 0; i < kLanes; ++i) r.v[i] = f(a.v[i], b.v[i]);
        ttsim::sfpi_emu::count();
        return r;
    }
    friend vFloat operator+(const vFloat& a, const vFloat& b) { return map(a, b, [](float x, float y) { return x + y; }); }
    friend vFloat operator-(const vFloat& a, const vFloat& b) { return map(a, b, [](float x, float y) { return x - y; }); }
    friend vFloat operator*(const vFloat& a, const vFloat& b) { return map(a, b, [](float x, float y) { return x * y; }); }
    vFloat operator-() const { return map(*this, *this, [](float x, float) { return -x; }); }

    template <typename F>
    static vCond cmp(const vFloat& a, const vFloat& b, F f) {
        vCond c;
        for (int i = 0; i < kLanes; ++i) c.on[i] = f(a.v[i], b.v[i]);
        ttsim::sfpi_emu::count();
        return c;
    }
    friend vCond operator<(const vFloat& a, const vFloat& b) { return cmp(a, b, [](float x, float y) { return x < y; }); }
    friend vCond operator>(const vFloat& a, const vFloat& b) { return cmp(a, b, [](float x, float y) { return x > y; }); }
    friend vCond operator<=(const vFloat& a, const vFloat& b) { return cmp(a, b, [](float x, float y) { return x <= y; }); }
    friend vCond operator>=(const vFloat& a, const vFloat& b) { return cmp(a, b, [](float x, float y) { return x >= y; }); }
    friend vCond operator==(const vFloat& a, const vFloat& b) { return cmp(a, b, [](float x, float y) { return x == y; }); }
    friend vCond operator!=(const vFloat& a, const vFloat& b) { return cmp(a, b, [](float x, float y) { return x != y; }); }
};

// 32 lanes of 32-bit integers (two's complement).
class vInt {
public:
    int32_t v[kLanes];
    vInt() { for (int32_t& x : v) x = 0; }
    vInt(int32_t n) { for (int32_t& x : v) x = n; }
    vInt(const vInt& o) = default;
    vInt& operator=(const vInt& o) {
        const auto& s = ttsim::sfpi_emu::st();
        for (int i = 0; i < kLanes; ++i)
            if (s.mask.on[i]) v[i] = o.v[i];
        ttsim::sfpi_emu::count();
        return *this;
    }
    template <typename F>
    static vInt map(const vInt& a, const vInt& b, F f) {
        vInt r;
        for (int i = 0; i < kLanes; ++i) r.v[i] = f(a.v[i], b.v[i]);
        ttsim::sfpi_emu::count();
        return r;
    }
    friend vInt operator+(const vInt& a, const vInt& b) { return map(a, b, [](int32_t x, int32_t y) { return int32_t(uint32_t(x) + uint32_t(y)); }); }
    friend vInt operator-(const vInt& a, const vInt& b) { return map(a, b, [](int32_t x, int32_t y) { return int32_t(uint32_t(x) - uint32_t(y)); }); }
    friend vInt operator&(const vInt& a, const vInt& b) { return map(a, b, [](int32_t x, int32_t y) { return x & y; }); }
    friend vInt operator|(const vInt& a, const vInt& b) { return map(a, b, [](int32_t x, int32_t y) { return x | y; }); }
    friend vInt operator^(const vInt& a, const vInt& b) { return map(a, b, [](int32_t x, int32_t y) { return x ^ y; }); }
    template <typename F>
    static vCond cmp(const vInt& a, const vInt& b, F f) {
        vCond c;
        for (int i = 0; i < kLanes; ++i) c.on[i] = f(a.v[i], b.v[i]);
        ttsim::sfpi_emu::count();
        return c;
    }
    friend vCond operator<(const vInt& a, const vInt& b) { return cmp(a, b, [](int32_t x, int32_t y) { return x < y; }); }
    friend vCond operator>(const vInt& a, const vInt& b) { return cmp(a, b, [](int32_t x, int32_t y) { return x > y; }); }
    friend vCond operator<=(const vInt& a, const vInt& b) { return cmp(a, b, [](int32_t x, int32_t y) { return x <= y; }); }
    friend vCond operator>=(const vInt& a, const vInt& b) { return cmp(a, b, [](int32_t x, int32_t y) { return x >= y; }); }
    friend vCond operator==(const vInt& a, const vInt& b) { return cmp(a, b, [](int32_t x, int32_t y) { return x == y; }); }
    friend vCond operator!=(const vInt& a, const vInt& b) { return cmp(a, b, [](int32_t x, int32_t y) { return x != y; }); }
};

// One DST address (dst_reg[i]): a load when read, a store (under the lane mask) when assigned.
class DstRow {
public:
    explicit DstRow(int index) : index_(index) {}
    operator vFloat() const {
        vFloat r;
        const int addr = address();
        for (int lane = 0; lane < kLanes; ++lane) {
            int tile, elem;
            ttsim::sfpi_emu::locate(addr, lane, tile, elem);
            std::memcpy(&r.v[lane], &ttsim::sfpi_emu::tile_words(tile)[elem], 4);
        }
        ttsim::sfpi_emu::count();
        return r;
    }
    const DstRow& operator=(const vFloat& x) const {
        auto& s = ttsim::sfpi_emu::st();
        const int addr = address();
        for (int lane = 0; lane < kLanes; ++lane) {
            if (!s.mask.on[lane]) continue;
            int tile, elem;
            ttsim::sfpi_emu::locate(addr, lane, tile, elem);
            uint32_t w;
            std::memcpy(&w, &x.v[lane], 4);
            ttsim::sfpi_emu::tile_words(tile)[elem] = ttsim::sfpi_emu::dst_store_word(w);
            s.dirty[tile] = true;
        }
        ttsim::sfpi_emu::count();
        return *this;
    }
    const DstRow& operator=(const DstRow& o) const { return *this = vFloat(o); }
    const DstRow& operator=(float f) const { return *this = vFloat(f); }

private:
    int address() const {
        const auto& s = ttsim::sfpi_emu::st();
        return s.base_row + 2 * (s.counter + index_);
    }
    int index_;
};

// sfpi::dst_reg: indexing addresses DST relative to the current position; ++ / += advance it (the
// Dst read/write counter, 2 rows a step).
struct DstReg {
    DstRow operator[](int i) const { return DstRow(i); }
    DstRow operator[](uint32_t i) const { return DstRow(int(i)); }
    void operator++(int) const { ttsim::sfpi_emu::st().counter += 1; }
    void operator++() const { ttsim::sfpi_emu::st().counter += 1; }
    void operator+=(int n) const { ttsim::sfpi_emu::st().counter += n; }
};
inline constexpr DstReg dst_reg{};

}  // namespace sfpi

namespace ttsim::sfpi_emu {
// The lane-mask stack of v_if / v_elseif / v_else / v_endif (SFPPUSHC / SFPSETCC / SFPCOMPC / SFPPOPC).
inline void cond_push(const sfpi::vCond& c) {
    State& s = st();
    if (s.depth == State::kDepth) TTSIM->fail(s.call, "raw SFPI code nests v_if deeper than the simulator's 8 levels");
    auto& f = s.stack[s.depth++];
    f.parent = s.mask;
    for (int i = 0; i < kLanes; ++i) {
        f.taken.on[i] = f.parent.on[i] && c.on[i];
        s.mask.on[i] = f.taken.on[i];
    }
    count();
}
inline void cond_elseif(const sfpi::vCond& c) {
    State& s = st();
    auto& f = s.stack[s.depth - 1];
    for (int i = 0; i < kLanes; ++i) {
        s.mask.on[i] = f.parent.on[i] && !f.taken.on[i] && c.on[i];
        f.taken.on[i] = f.taken.on[i] || s.mask.on[i];
    }
    count();
}
inline void cond_else() {
    State& s = st();
    auto& f = s.stack[s.depth - 1];
    for (int i = 0; i < kLanes; ++i) s.mask.on[i] = f.parent.on[i] && !f.taken.on[i];
    count();
}
inline void cond_and(const sfpi::vCond& c) {
    State& s = st();
    for (int i = 0; i < kLanes; ++i) s.mask.on[i] = s.mask.on[i] && c.on[i];
    count();
}
inline void cond_pop() {
    State& s = st();
    s.mask = s.stack[--s.depth].parent;
    count();
}
}  // namespace ttsim::sfpi_emu

// Every lane runs the bodies; the mask decides which lanes' results land.
#define v_if(cond) { ::ttsim::sfpi_emu::cond_push(cond); if (true)
#define v_elseif(cond) ::ttsim::sfpi_emu::cond_elseif(cond); if (true)
#define v_else ::ttsim::sfpi_emu::cond_else(); if (true)
#define v_endif ::ttsim::sfpi_emu::cond_pop(); }
#define v_and(cond) ::ttsim::sfpi_emu::cond_and(cond)

namespace ttsim::sfpi_emu {

inline void begin(const char* call, int base_tile) {
    if (state.active) TTSIM->fail(call, "raw SFPI driver called from inside raw SFPI code");
    State& s = state;
    s.call = call;
    s.active = true;
    for (int t = 0; t < kMaxDstTiles; ++t) s.loaded[t] = s.dirty[t] = false;
    s.instructions = 0;
    s.depth = 0;
    for (bool& b : s.mask.on) b = true;
    s.base_row = base_tile * kTileRows;
    s.counter = 0;
}
inline void end() {
    State& s = st();
    if (s.depth != 0) TTSIM->fail(s.call, "raw SFPI code left a v_if without its v_endif");
    for (int t = 0; t < kMaxDstTiles; ++t)
        if (s.dirty[t]) TTSIM->sfpu_dst_write(s.call, t, s.words[t]);
    s.active = false;
    TTSIM->sfpu_charge(s.call, s.instructions * sfpu_cost::kSfpiInstruction);
}
// A session opened by the kernel itself (math::set_addr_mod_base), closed by math::clear_addr_mod_base.
inline void begin_direct(const char* call) { begin(call, 0); }
inline void end_direct() { end(); }
// TTI_SETRWC: only the Dst counter's carriage-return form is modeled: D = Cr + n, Cr = D.
inline void set_rwc_d(uint32_t clear_ab, uint32_t rwc_cr, uint32_t rwc_d, uint32_t rwc_b, uint32_t rwc_a,
                      uint32_t bit_mask) {
    State& s = st();
    if (clear_ab != 0 || rwc_cr != 0x4 || bit_mask != 0x4 || rwc_b != 0 || rwc_a != 0) {
        TTSIM->fail("TTI_SETRWC", "not modeled by the simulator: only SETRWC(CLR_NONE, CR_D, n, 0, 0, SET_D)");
    }
    s.base_row += int(rwc_d);
    s.counter = 0;
}

// A driver call: set up, run `body` per face, write back what was stored, charge the instructions.
// Faces as tt-llk's params drivers: RC all four, R faces 0-1, C faces 0 and 2; each face starts at
// its own 16 rows whatever the code advanced (the drivers reset the counter per face, SETRWC).
template <typename Body>
inline void run_faces(const char* call, int base_tile, VectorMode mode, Body&& body) {
    if (state.active) TTSIM->fail(call, "raw SFPI driver called from inside raw SFPI code");
    if (mode != VectorMode::RC && mode != VectorMode::R && mode != VectorMode::C) {
        TTSIM->fail(call, "raw SFPI driver: only VectorMode RC, R and C are modeled");
    }
    begin(call, base_tile);
    State& s = state;
    const uint32_t faces = sfpu_faces(mode);
    for (int face = 0; face < 4; ++face) {
        if (!(faces >> face & 1u)) continue;
        s.base_row = base_tile * kTileRows + 16 * face;
        s.counter = 0;
        body();
        if (s.depth != 0) TTSIM->fail(call, "raw SFPI code left a v_if without its v_endif");
    }
    end();
}

}  // namespace ttsim::sfpi_emu
