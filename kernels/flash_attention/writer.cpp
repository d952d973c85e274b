// Flash-attention writer: output tiles to DRAM, and (gated programs) the gate tiles the compute
// kernel multiplies in, read just ahead of the output chunk that needs them.
//
// Compile-time args:
//   0 Dt      head_dim / 32
//   1 hpu     query heads per unit
//   2 gated   1: read gate tiles into cb_gate
//   3..       TensorAccessorArgs of the output, then of the gate (present, unused, when not gated)
// Runtime args:
//   0 output address, 1 gate address (0 when not gated), 2 query tile-rows per head in the tensors,
//   3 Bq, 4 rt, 5 ct_o, 6 number of units, 7.. the units ((head group << 16) | query block)
// Circular buffers: cb_out -> output (a row group at a time), gate -> cb_gate; both in the compute
// kernel's chunk order:
//   for each row group of rt rows, for each chunk of ct_o head-dim tiles, tiles in (row, column) order.
// The output and gate tensors are [Hq, query tile-rows per head * 32, head_dim], tiled.
#include "api/dataflow/dataflow_api.h"
#include "flash_attention_common.h"

void kernel_main() {
    constexpr uint32_t Dt = get_compile_time_arg_val(0);
    constexpr uint32_t kHeadsPerUnit = get_compile_time_arg_val(1);
    constexpr bool kGated = get_compile_time_arg_val(2) != 0;
    constexpr auto out_args = TensorAccessorArgs<3>();
    constexpr auto gate_args = TensorAccessorArgs<out_args.next_compile_time_args_offset()>();

    const uint32_t out_addr = get_arg_val<uint32_t>(0);
    const uint32_t gate_addr = get_arg_val<uint32_t>(1);
    const uint32_t q_tiles_per_head = get_arg_val<uint32_t>(2);
    const uint32_t bq = get_arg_val<uint32_t>(3);
    const uint32_t rt = get_arg_val<uint32_t>(4);
    const uint32_t ct_o = get_arg_val<uint32_t>(5);
    const uint32_t num_units = get_arg_val<uint32_t>(6);
    constexpr uint32_t kFirstUnitArg = 7;

    const uint32_t out_tile_bytes = get_tile_size(fa::cb_out);
    const auto out = TensorAccessor(out_args, out_addr, out_tile_bytes);

    const uint32_t rows = kHeadsPerUnit * bq;
    const uint32_t chunk = rt * ct_o;
    for (uint32_t n = 0; n < num_units; ++n) {
        const fa::Unit unit = fa::decode_unit(get_arg_val<uint32_t>(kFirstUnitArg + n));
        for (uint32_t rho0 = 0; rho0 < rows; rho0 += rt) {
            for (uint32_t c0 = 0; c0 < Dt; c0 += ct_o) {
                if constexpr (kGated) {
                    const uint32_t gate_tile_bytes = get_tile_size(fa::cb_gate);
                    const auto gate = TensorAccessor(gate_args, gate_addr, gate_tile_bytes);
                    cb_reserve_back(fa::cb_gate, chunk);
                    uint32_t l1 = get_write_ptr(fa::cb_gate);
                    for (uint32_t r = 0; r < rt; ++r) {
                        const uint32_t rho = rho0 + r;
                        const uint32_t row_first =
                            (fa::row_head(unit, rho, kHeadsPerUnit, bq) * q_tiles_per_head + fa::row_q_tile(unit, rho, bq)) * Dt;
                        for (uint32_t c = 0; c < ct_o; ++c) {
                            noc_async_read_page(row_first + c0 + c, gate, l1);
                            l1 += gate_tile_bytes;
                        }
                    }
                    noc_async_read_barrier();
                    cb_push_back(fa::cb_gate, chunk);
                }
            }
            // The row group's whole output per write barrier (cb_out holds two groups), so the barrier's
            // latency is paid once per group rather than once per chunk.
            cb_wait_front(fa::cb_out, rt * Dt);
            uint32_t l1 = get_read_ptr(fa::cb_out);
            for (uint32_t c0 = 0; c0 < Dt; c0 += ct_o) {
                for (uint32_t r = 0; r < rt; ++r) {
                    const uint32_t rho = rho0 + r;
                    const uint32_t row_first =
                        (fa::row_head(unit, rho, kHeadsPerUnit, bq) * q_tiles_per_head + fa::row_q_tile(unit, rho, bq)) * Dt;
                    for (uint32_t c = 0; c < ct_o; ++c) {
                        noc_async_write_page(row_first + c0 + c, out, l1);
                        l1 += out_tile_bytes;
                    }
                }
            }
            noc_async_write_barrier();
            cb_pop_front(fa::cb_out, rt * Dt);
        }
    }
}
