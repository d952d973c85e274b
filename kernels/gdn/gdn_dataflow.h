// Helpers shared by the GDN data-movement kernels: addressing one element of a tile in L1 and
// building small tiles (masks, shift matrices, column broadcasts) with the core's own stores. These
// move bits, they do no arithmetic, so what they build is exact.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "gate_vectors.h"

namespace gdn {

constexpr uint32_t kTileDim = 32;
constexpr uint32_t kFaceDim = 16;
constexpr uint32_t kFaceElems = kFaceDim * kFaceDim;
constexpr uint32_t kTileElems = kTileDim * kTileDim;
constexpr uint16_t kBf16One = 0x3F80;  // 1.0 as bfloat16 bits

template <typename T>
inline volatile tt_l1_ptr T* l1_ptr(uint32_t l1_addr) {
    return reinterpret_cast<volatile tt_l1_ptr T*>(static_cast<uintptr_t>(l1_addr));
}

// Index, in elements, of logical (row, col) in a tile stored as four 16x16 faces
// (top-left, top-right, bottom-left, bottom-right; row-major inside a face).
inline uint32_t face_offset(uint32_t row, uint32_t col) {
    return ((row / kFaceDim) * 2 + col / kFaceDim) * kFaceElems + (row % kFaceDim) * kFaceDim + col % kFaceDim;
}

inline void zero_tile(uint32_t l1_addr, uint32_t bytes) {
    volatile tt_l1_ptr uint32_t* p = l1_ptr<uint32_t>(l1_addr);
    for (uint32_t i = 0; i < bytes / sizeof(uint32_t); ++i) p[i] = 0;
}

// A bf16 tile holding 1.0 where one(row, col) is true and 0 elsewhere.
template <typename Pred>
inline void write_bf16_pattern(uint32_t l1_addr, Pred one) {
    volatile tt_l1_ptr uint16_t* p = l1_ptr<uint16_t>(l1_addr);
    for (uint32_t r = 0; r < kTileDim; ++r) {
        for (uint32_t c = 0; c < kTileDim; ++c) p[face_offset(r, c)] = one(r, c) ? kBf16One : 0;
    }
}

// Column `col` of an fp32 tile copied into every column of another (rows at and past valid_rows are
// zero): a column broadcast of one value per row.
inline void broadcast_column_fp32(uint32_t dst_addr, uint32_t src_addr, uint32_t col, uint32_t valid_rows) {
    volatile tt_l1_ptr uint32_t* src = l1_ptr<uint32_t>(src_addr);
    volatile tt_l1_ptr uint32_t* dst = l1_ptr<uint32_t>(dst_addr);
    for (uint32_t r = 0; r < kTileDim; ++r) {
        const uint32_t bits = r < valid_rows ? src[face_offset(r, col)] : 0u;
        for (uint32_t c = 0; c < kTileDim; ++c) dst[face_offset(r, c)] = bits;
    }
}

// Row src_row of a tile copied to row dst_row of another tile of the same format (element_bytes 2 or 4).
inline void copy_row(uint32_t dst_addr, uint32_t dst_row, uint32_t src_addr, uint32_t src_row, uint32_t element_bytes) {
    for (uint32_t half = 0; half < 2; ++half) {  // the row's two faces
        const uint32_t col = half * kFaceDim;
        const uint32_t bytes = kFaceDim * element_bytes;
        const uint32_t s = src_addr + face_offset(src_row, col) * element_bytes;
        const uint32_t d = dst_addr + face_offset(dst_row, col) * element_bytes;
        volatile tt_l1_ptr uint32_t* sp = l1_ptr<uint32_t>(s);
        volatile tt_l1_ptr uint32_t* dp = l1_ptr<uint32_t>(d);
        for (uint32_t i = 0; i < bytes / sizeof(uint32_t); ++i) dp[i] = sp[i];
    }
}

// Row `row` of fp32 tile `page` of `tensor` into row 0 of the tile at l1_addr: the row's two 16-value
// face rows, 64 bytes each, read straight from DRAM (no core stores).
template <typename Accessor>
inline void read_row_fp32(const Accessor& tensor, uint32_t page, uint32_t row, uint32_t l1_addr) {
    for (uint32_t half = 0; half < 2; ++half) {
        const uint32_t col = half * kFaceDim;
        noc_async_read(tensor.get_noc_addr(page, face_offset(row, col) * sizeof(uint32_t)),
                       l1_addr + face_offset(0, col) * sizeof(uint32_t), kFaceDim * sizeof(uint32_t));
    }
}

// The chunk's token tiles of one head: nt x width tiles (row-major, from column tile col0 of a
// token-major tensor row_tiles wide) to l1 (a reserved CB region), zero tiles past the tensor's end (a
// ragged last chunk). Issues the reads only: the caller's noc_async_read_barrier completes them.
template <typename Accessor>
inline void issue_head_block(uint32_t l1, uint32_t tile_bytes, const Accessor& tensor, uint32_t first_token_tile,
                             uint32_t nt, uint32_t token_tiles, uint32_t row_tiles, uint32_t col0, uint32_t width) {
    for (uint32_t i = 0; i < nt; ++i) {
        const uint32_t tt = first_token_tile + i;
        for (uint32_t j = 0; j < width; ++j) {
            const uint32_t addr = l1 + (i * width + j) * tile_bytes;
            if (tt < token_tiles) {
                noc_async_read_page(tt * row_tiles + col0 + j, tensor, addr);
            } else {
                zero_tile(addr, tile_bytes);
            }
        }
    }
}

// issue_head_block into cb, completed and pushed.
template <typename Accessor>
inline void read_head_block(uint32_t cb, const Accessor& tensor, uint32_t first_token_tile, uint32_t nt,
                            uint32_t token_tiles, uint32_t row_tiles, uint32_t col0, uint32_t width) {
    cb_reserve_back(cb, nt * width);
    issue_head_block(get_write_ptr(cb), get_tile_size(cb), tensor, first_token_tile, nt, token_tiles, row_tiles, col0,
                     width);
    noc_async_read_barrier();
    cb_push_back(cb, nt * width);
}

// One value head's gate vectors for a chunk (gate_vectors.h) to l1 (a reserved CB region) as vector
// tiles: quantity q of token tile i at tile q * nt + i, values in row 0. Token tiles past the sequence
// get zeros (no decay, no write); the other rows of a vector tile are never read. Issues the reads only.
template <typename Accessor>
inline void issue_gate_vectors(uint32_t l1, uint32_t tile_bytes, const Accessor& tensor, uint32_t head,
                               uint32_t first_token_tile, uint32_t nt, uint32_t kinds, uint32_t head_tiles,
                               uint32_t token_tiles) {
    const uint32_t row_tiles = gv::row_tiles(token_tiles);
    for (uint32_t q = 0; q < kinds; ++q) {
        for (uint32_t i = 0; i < nt; ++i) {
            const uint32_t addr = l1 + (q * nt + i) * tile_bytes;
            const uint32_t tt = first_token_tile + i;
            if (tt < token_tiles) {
                read_row_fp32(tensor, (q * head_tiles + head / kTileDim) * row_tiles + tt, head % kTileDim, addr);
            } else {
                for (uint32_t half = 0; half < 2; ++half) {
                    volatile tt_l1_ptr uint32_t* p = l1_ptr<uint32_t>(addr + face_offset(0, half * kFaceDim) * 4);
                    for (uint32_t c = 0; c < kFaceDim; ++c) p[c] = 0;
                }
            }
        }
    }
}

// issue_gate_vectors into cb, completed and pushed.
template <typename Accessor>
inline void read_gate_vectors(uint32_t cb, const Accessor& tensor, uint32_t head, uint32_t first_token_tile,
                              uint32_t nt, uint32_t kinds, uint32_t head_tiles, uint32_t token_tiles) {
    cb_reserve_back(cb, kinds * nt);
    issue_gate_vectors(get_write_ptr(cb), get_tile_size(cb), tensor, head, first_token_tile, nt, kinds, head_tiles,
                       token_tiles);
    noc_async_read_barrier();
    cb_push_back(cb, kinds * nt);
}

// Zero every page of a CB once before first use, so the never-written rows of its vector tiles hold
// zeros rather than whatever L1 held before.
inline void zero_cb_pages(uint32_t cb, uint32_t pages) {
    cb_reserve_back(cb, pages);
    zero_tile(get_write_ptr(cb), pages * get_tile_size(cb));
}

}  // namespace gdn
