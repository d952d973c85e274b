// Test reader: streams tiles of up to two DRAM tensors into CBs, one tile at a time.
//
// Compile-time args: TensorAccessorArgs of input A at 0, of input B right after it.
// Runtime args: 0 address of A, 1 address of B (ignored when num inputs is 1), 2 first tile,
//               3 number of tiles, 4 number of inputs (1 or 2), 5 tiles of B per tile of A
//               (0: B advances with A; 1+: B is a fixed block of that many tiles, read once).
// CBs: c_0 <- A, c_1 <- B.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    const uint32_t addr_a = get_arg_val<uint32_t>(0);
    const uint32_t addr_b = get_arg_val<uint32_t>(1);
    const uint32_t first = get_arg_val<uint32_t>(2);
    const uint32_t count = get_arg_val<uint32_t>(3);
    const uint32_t inputs = get_arg_val<uint32_t>(4);
    const uint32_t b_block = get_arg_val<uint32_t>(5);

    constexpr auto args_a = TensorAccessorArgs<0>();
    constexpr auto args_b = TensorAccessorArgs<args_a.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(args_a, addr_a, get_tile_size(cb_a));

    if (inputs == 2 && b_block > 0) {
        const auto b = TensorAccessor(args_b, addr_b, get_tile_size(cb_b));
        cb_reserve_back(cb_b, b_block);
        uint32_t l1 = get_write_ptr(cb_b);
        for (uint32_t i = 0; i < b_block; ++i) {
            noc_async_read_page(i, b, l1 + i * get_tile_size(cb_b));
        }
        noc_async_read_barrier();
        cb_push_back(cb_b, b_block);
    }
    for (uint32_t t = first; t < first + count; ++t) {
        cb_reserve_back(cb_a, 1);
        noc_async_read_page(t, a, get_write_ptr(cb_a));
        if (inputs == 2 && b_block == 0) {
            const auto b = TensorAccessor(args_b, addr_b, get_tile_size(cb_b));
            cb_reserve_back(cb_b, 1);
            noc_async_read_page(t, b, get_write_ptr(cb_b));
            noc_async_read_barrier();
            cb_push_back(cb_b, 1);
        }
        noc_async_read_barrier();
        cb_push_back(cb_a, 1);
    }
}
