// Printing a slice of a tile with DPRINT (api/debug/dprint_tile.h): TileSlice names the slice. Like
// DPRINT itself it only matters with DEBUG_PRINT_ENABLED, and the simulator's DPRINT does not print
// tile slices (it refuses them at compile time), so TileSlice here only carries its arguments.
#pragma once

#include <cstdint>

#include "api/debug/dprint.h"
#include "internal/circular_buffer_interface.h"
// numpy's [h0:h1:hs, w0:w1:ws] over a tile, with the ready-made ones tt-metal names.
struct SliceRange {
    uint8_t h0, h1, hs, w0, w1, ws;
    static SliceRange hw0_32_16() { return {0, 32, 16, 0, 32, 16}; }
    static SliceRange hw0_32_8() { return {0, 32, 8, 0, 32, 8}; }
    static SliceRange hw0_32_4() { return {0, 32, 4, 0, 32, 4}; }
    static SliceRange h0_w0_32() { return {0, 1, 1, 0, 32, 1}; }
    static SliceRange h0_32_w0() { return {0, 32, 1, 0, 1, 1}; }
    static SliceRange h0_32_w1() { return {0, 32, 1, 1, 2, 1}; }
    static SliceRange hw041() { return {0, 4, 1, 0, 4, 1}; }
};

#define CB_PAGE_SIZE(id) (get_local_cb_interface(id).fifo_page_size << cb_addr_shift)

using dprint_tslice_ptr_t = bool;
#define TSLICE_RD_PTR true
#define TSLICE_WR_PTR false
using dprint_tslice_cb_t = bool;
#define TSLICE_INPUT_CB true
#define TSLICE_OUTPUT_CB false

template <int MAX_BYTES = 32 * 2>
struct TileSlice {
    TileSlice(uint8_t cb, int tile_idx, const SliceRange& slice_range,
// The data-movement cores name the CB's direction; the pointer read by default differs by core as in
// tt-metal (NCRISC, usually the reader, its write pointer; BRISC its read pointer).
#if defined(COMPILE_FOR_NCRISC)
              dprint_tslice_cb_t cb_type, dprint_tslice_ptr_t ptr_type = TSLICE_WR_PTR,
#elif !defined(COMPILE_FOR_TRISC)
              dprint_tslice_cb_t cb_type, dprint_tslice_ptr_t ptr_type = TSLICE_RD_PTR,
#endif
              bool endl_rows = true, bool print_untilized = true) :
        cb(cb), tile_idx(tile_idx), slice_range(slice_range), endl_rows(endl_rows), print_untilized(print_untilized) {}

    uint8_t cb;
    int tile_idx;
    SliceRange slice_range;
    bool endl_rows, print_untilized;
};
