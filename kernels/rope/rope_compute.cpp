// Partial RoPE (rotate_half form) on a head's rotary tiles. With R rotary tiles and h = R / 2:
//   y_j = x_j * cos_j - x_{j+h} * sin_j   for j <  h
//   y_j = x_j * cos_j + x_{j-h} * sin_j   for j >= h
// (rotate_half's halves are whole tiles because the rotary width is a multiple of 64). Products and
// sums in fp32 DST on the SFPU; cos/sin are fp32 tiles unpacked straight to DST, x is exact bf16.
//
// A rotation inside one tile (rotary width 16 or 32, R = 1): y = x * cos' + s(x) * sin', with s(x) the
// reader's copy of x with the rotary halves exchanged (c_3) and the signs and the pass-through columns
// (cos' = 1, sin' = 0) in the host's tables.
//
// Common runtime args: 0 heads, 1 rotary tiles R, 2 sub-tile rotation (0 / 1).
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_0 x, c_1 cos, c_2 sin, c_3 swapped x (sub-tile only); c_16 y.
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/tile_move_copy.h"

namespace {

ALWI void load(uint32_t cb, uint32_t tile, uint32_t dst) {
    reconfig_data_format_srca(cb);
    copy_init(cb);
    copy_tile(cb, tile, dst);
}

}  // namespace

void kernel_main() {
    constexpr uint32_t cb_x = tt::CBIndex::c_0;
    constexpr uint32_t cb_cos = tt::CBIndex::c_1;
    constexpr uint32_t cb_sin = tt::CBIndex::c_2;
    constexpr uint32_t cb_y = tt::CBIndex::c_16;
    const uint32_t heads = get_common_arg_val<uint32_t>(0);
    const uint32_t rotary_tiles = get_common_arg_val<uint32_t>(1);
    const bool sub_tile = get_common_arg_val<uint32_t>(2) != 0;
    constexpr uint32_t cb_swap = tt::CBIndex::c_3;
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);
    const uint32_t half = rotary_tiles / 2;

    compute_kernel_hw_startup(cb_x, cb_cos, cb_y);
    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        const uint32_t head = u % heads;
        if (u == first_unit || head == 0) {
            cb_wait_front(cb_cos, rotary_tiles);
            cb_wait_front(cb_sin, rotary_tiles);
        }
        cb_wait_front(cb_x, rotary_tiles);
        if (sub_tile) {
            cb_wait_front(cb_swap, 1);
            tile_regs_acquire();
            load(cb_x, 0, 0);
            load(cb_cos, 0, 1);
            mul_binary_tile_init();
            mul_binary_tile(0, 1, 0);
            load(cb_swap, 0, 1);
            load(cb_sin, 0, 2);
            mul_binary_tile(1, 2, 1);
            add_binary_tile_init();
            add_binary_tile(0, 1, 0);
            tile_regs_commit();
            tile_regs_wait();
            cb_reserve_back(cb_y, 1);
            pack_tile(0, cb_y);
            cb_push_back(cb_y, 1);
            tile_regs_release();
            cb_pop_front(cb_swap, 1);
        }
        for (uint32_t j = 0; j < (sub_tile ? 0 : rotary_tiles); ++j) {
            const bool first_half = j < half;
            tile_regs_acquire();
            load(cb_x, j, 0);
            load(cb_cos, j, 1);
            mul_binary_tile_init();
            mul_binary_tile(0, 1, 0);
            load(cb_x, first_half ? j + half : j - half, 1);
            load(cb_sin, j, 2);
            mul_binary_tile(1, 2, 1);
            if (first_half) {
                sub_binary_tile_init();
                sub_binary_tile(0, 1, 0);
            } else {
                add_binary_tile_init();
                add_binary_tile(0, 1, 0);
            }
            tile_regs_commit();
            tile_regs_wait();
            cb_reserve_back(cb_y, 1);
            pack_tile(0, cb_y);
            cb_push_back(cb_y, 1);
            tile_regs_release();
        }
        cb_pop_front(cb_x, rotary_tiles);
        if (u + 1 == first_unit + num_units || (u + 1) % heads == 0) {
            cb_pop_front(cb_cos, rotary_tiles);
            cb_pop_front(cb_sin, rotary_tiles);
        }
    }
}
