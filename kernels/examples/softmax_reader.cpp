// Row softmax example, reader: a CB of ones (the reduce scaler), then each tile row of x.
//
// Compile-time args: TensorAccessorArgs of x at 0.
// Runtime args: 0 x address, 1 first tile row, 2 number of tile rows, 3 tiles per row.
// CBs: c_0 x rows (a whole tile row at a time), c_1 scaler tile (bf16 ones).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_x = tt::CBIndex::c_0;
    constexpr uint32_t cb_scaler = tt::CBIndex::c_1;
    constexpr uint16_t kBf16One = 0x3F80;
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);
    const uint32_t ct = get_arg_val<uint32_t>(3);

    // The reduce multiplies by the scaler tile's first element; fill the whole tile for clarity.
    cb_reserve_back(cb_scaler, 1);
    volatile tt_l1_ptr uint16_t* s = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(get_write_ptr(cb_scaler));
    for (uint32_t i = 0; i < 1024; ++i) s[i] = kBf16One;
    cb_push_back(cb_scaler, 1);

    constexpr auto args = TensorAccessorArgs<0>();
    const uint32_t tile = get_tile_size(cb_x);
    const auto x = TensorAccessor(args, addr, tile);
    for (uint32_t r = first; r < first + count; ++r) {
        cb_reserve_back(cb_x, ct);
        uint32_t l1 = get_write_ptr(cb_x);
        for (uint32_t c = 0; c < ct; ++c) noc_async_read_page(r * ct + c, x, l1 + c * tile);
        noc_async_read_barrier();
        cb_push_back(cb_x, ct);
    }
}
