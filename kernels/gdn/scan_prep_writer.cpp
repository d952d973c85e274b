// GDN chunk preparation, writer: drains each unit's record (P, -W, U; see scan_prep_compute.cpp) into
// the chunk-record tensor and its factor tiles (exp(gam), exp(gam_last - gam), exp(gam_last)) into the
// factor tensor.
//
// Unit u (value head hv, chunk c; u = hv * chunks + c) owns tiles [u * record_tiles, (u + 1) *
// record_tiles) of the record tensor and [u * factor_tiles, (u + 1) * factor_tiles) of the factor tensor.
//
// Compile-time args: TensorAccessorArgs of the record tensor at 0, then of the factor tensor (fp32).
// Common runtime args: 0 record tensor address, 1 factor tensor address, 2 tiles per record,
//   3 factor tiles per unit.
// Runtime args: 0 first unit, 1 number of units.
// CBs: c_16 record tiles, c_17 factor tiles.
#include "api/dataflow/dataflow_api.h"

namespace {
template <typename Accessor>
void drain(uint32_t cb, const Accessor& tensor, uint32_t first_tile, uint32_t count) {
    for (uint32_t i = 0; i < count; ++i) {
        cb_wait_front(cb, 1);
        noc_async_write_page(first_tile + i, tensor, get_read_ptr(cb));
        noc_async_writes_flushed();
        cb_pop_front(cb, 1);
    }
}
}  // namespace

void kernel_main() {
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    constexpr uint32_t cb_factors_out = tt::CBIndex::c_17;
    const uint32_t records_addr = get_common_arg_val<uint32_t>(0);
    const uint32_t factors_addr = get_common_arg_val<uint32_t>(1);
    const uint32_t record_tiles = get_common_arg_val<uint32_t>(2);
    const uint32_t factor_tiles = get_common_arg_val<uint32_t>(3);
    const uint32_t first_unit = get_arg_val<uint32_t>(0);
    const uint32_t num_units = get_arg_val<uint32_t>(1);

    constexpr auto record_args = TensorAccessorArgs<0>();
    constexpr auto factor_args = TensorAccessorArgs<record_args.next_compile_time_args_offset()>();
    const auto records = TensorAccessor(record_args, records_addr, get_tile_size(cb_out));
    const auto factors = TensorAccessor(factor_args, factors_addr, get_tile_size(cb_factors_out));

    for (uint32_t u = first_unit; u < first_unit + num_units; ++u) {
        drain(cb_out, records, u * record_tiles, record_tiles);
        drain(cb_factors_out, factors, u * factor_tiles, factor_tiles);
    }
    noc_async_write_barrier();
}
