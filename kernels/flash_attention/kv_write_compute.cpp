// K/V cache write, compute: converts the new bf16 tiles to the cache pages' format (bf16 or bfp8_b)
// by copying them through DST and packing into a CB of the page format.
//
// Compile-time args: none.
// Runtime args: 0 number of tiles.
// Circular buffers: cb_new (bf16) -> cb_page (page format), one tile at a time.
#include <cstdint>

#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"

namespace {
constexpr uint32_t cb_new = tt::CBIndex::c_0;
constexpr uint32_t cb_page = tt::CBIndex::c_16;
}  // namespace

void kernel_main() {
    const uint32_t num_tiles = get_arg_val<uint32_t>(0);
    compute_kernel_hw_startup(cb_new, cb_page);
    copy_init(cb_new);
    for (uint32_t t = 0; t < num_tiles; ++t) {
        cb_wait_front(cb_new, 1);
        tile_regs_acquire();
        copy_tile(cb_new, 0, 0);
        tile_regs_commit();
        cb_pop_front(cb_new, 1);
        cb_reserve_back(cb_page, 1);
        tile_regs_wait();
        pack_tile(0, cb_page);
        tile_regs_release();
        cb_push_back(cb_page, 1);
    }
}
