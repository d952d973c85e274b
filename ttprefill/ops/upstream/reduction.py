"""tt-metal's generic reduce over W (ttnn.sum / ttnn.max over the last dim of a tiled, interleaved
tensor), the Metal 2.0 kernels of ttnn 0.81.1 (reduction/generic/device/kernels/):
    dataflow/reader_unary_reduce_universal_start_id.cpp  RISCV_1: fills the scaler tile (dfb scaler) with
        kernel_lib's prepare_reduce_scaler, then streams the core's tiles into dfb in0; args num_tiles,
        start_id, scaler_bits (runtime) and tiles_per_batch (compile time); tensor src
    compute/reduce.cpp                                    kernel_lib's reduce over the core's rows; args Ht
        (the core's tile rows), Wt, NC = 1 (runtime) and enable_fp32_sfpu = 0 (compile time); defines
        REDUCE_OP, REDUCE_DIM = ReduceDim::REDUCE_ROW
    eltwise/unary/.../writer_unary_interleaved_start_id_metal2.cpp  RISCV_0: one tile per row from dfb
        out; args num_pages, start_id; tensor dst
Buffers: in0 two tiles (reads one tile per batch), scaler one tile (bf16, or fp32 for fp32 input), out two
tiles; tile rows split with split_work_to_cores (row-major); compute HiFi4, fp32 DST for fp32 input.
The factory (reduce_op_multi_core_w_program_factory.cpp) also batches reads and picks a post-multiply
for MAX with a scaler other than 1; this mirror uses one tile per read and scaler 1 for MAX.
The W, H and single-core HW factories all give the reader create_reader_datamovement_config (NoC 0) and
the writer create_writer_datamovement_config (NoC 1).
"""

from __future__ import annotations

import numpy as np

from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    CircularBuffer,
    ComputeConfig,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
    TensorBinding,
)

from . import kernel_path
from .data_movement import split_work_to_cores
from .registry import expect_close, register

KDIR = "reduction/generic/device/kernels/"
READER = KDIR + "dataflow/reader_unary_reduce_universal_start_id.cpp"
COMPUTE = KDIR + "compute/reduce.cpp"
H_READER = KDIR + "dataflow/reader_unary_transpose_wh_universal_input_cols_partitioned.cpp"
WRITER = "eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id_metal2.cpp"
CB_IN, CB_SCALER, CB_OUT = 0, 2, 3
POOLS = {"sum": "ckernel::PoolType::SUM", "max": "ckernel::PoolType::MAX"}


def reduce_w_program(src, dst, op: str, *, scaler: float = 1.0, grid: tuple[int, int] = (1, 1)) -> Program:
    """src [..., H, W] -> dst [..., H, 32] whose column 0 holds op over each row, times `scaler`."""
    if op not in POOLS:
        raise ValueError(f"op must be one of {sorted(POOLS)}")
    wt = src.tiles_w
    rows = src.num_pages // wt
    if dst.num_pages != rows:
        raise ValueError("the output has one tile per 32-row band of the input")
    work, first = [], 0
    for core, n in split_work_to_cores(grid, rows, row_major=True):
        work.append((core, n, first))
        first += n
    cores = CoreRangeSet.of([c for c, _, _ in work])
    fp32 = src.data_format == DataFormat.Float32
    scaler_fmt = DataFormat.Float32 if fp32 else DataFormat.Float16_b
    cbs = [CircularBuffer(CB_IN, src.data_format, src.page_size, 2, cores),
           CircularBuffer(CB_SCALER, scaler_fmt, scaler_fmt.tile_bytes, 1, cores),
           CircularBuffer(CB_OUT, dst.data_format, dst.page_size, 2, cores)]
    defines = {"REDUCE_OP": POOLS[op], "REDUCE_DIM": "ckernel::ReduceDim::REDUCE_ROW"}
    scaler_bits = int(np.float32(scaler).view(np.uint32))
    reader = Kernel(kernel_path(READER), Role.RISCV_1, cores, defines=dict(defines),
                    named_compile_time_args={"tiles_per_batch": 1},
                    runtime_arg_names=["num_tiles", "start_id", "scaler_bits"],
                    runtime_args={c: [n * wt, s * wt, scaler_bits] for c, n, s in work},
                    dfb_bindings={"in0": CB_IN, "scaler": CB_SCALER},
                    tensor_bindings={"src": TensorBinding(tuple(src.accessor_args()), src.address)},
                    noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(WRITER), Role.RISCV_0, cores, runtime_arg_names=["num_pages", "start_id"],
                    runtime_args={c: [n, s] for c, n, s in work}, dfb_bindings={"out": CB_OUT},
                    tensor_bindings={"dst": TensorBinding(tuple(dst.accessor_args()), dst.address)},
                    noc=DRAM_WRITE_NOC)
    compute = Kernel(kernel_path(COMPUTE), Role.COMPUTE, cores, defines=dict(defines),
                     named_compile_time_args={"enable_fp32_sfpu": 0},
                     runtime_arg_names=["Ht", "Wt", "NC"], runtime_args={c: [n, wt, 1] for c, n, _ in work},
                     dfb_bindings={"in0": CB_IN, "scaler": CB_SCALER, "out": CB_OUT},
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=fp32))
    return Program(kernels=[reader, writer, compute], circular_buffers=cbs, name=f"upstream_reduce_w_{op}")


def reduce_hw_program(src, dst, op: str, *, scaler: float = 1.0) -> Program:
    """src [batch, H, W] -> dst [batch, 32, 32] whose element [0][0] holds op over each batch's matrix
    times `scaler`: reduce.cpp with REDUCE_DIM = REDUCE_SCALAR on one core (the single-core HW factory's
    shape: args Ht, Wt, NC = batch), fed by the same universal reader and unary _metal2 writer."""
    if op not in POOLS:
        raise ValueError(f"op must be one of {sorted(POOLS)}")
    ht, wt = src.tiles_h, src.tiles_w
    nc = src.num_pages // (ht * wt)
    if dst.num_pages != nc:
        raise ValueError("the output has one tile per batch")
    cores = CoreRangeSet.of([(0, 0)])
    fp32 = src.data_format == DataFormat.Float32
    scaler_fmt = DataFormat.Float32 if fp32 else DataFormat.Float16_b
    cbs = [CircularBuffer(CB_IN, src.data_format, src.page_size, 2, cores),
           CircularBuffer(CB_SCALER, scaler_fmt, scaler_fmt.tile_bytes, 1, cores),
           CircularBuffer(CB_OUT, dst.data_format, dst.page_size, 2, cores)]
    defines = {"REDUCE_OP": POOLS[op], "REDUCE_DIM": "ckernel::ReduceDim::REDUCE_SCALAR"}
    core = next(iter(cores.cores()))
    scaler_bits = int(np.float32(scaler).view(np.uint32))
    reader = Kernel(kernel_path(READER), Role.RISCV_1, cores, defines=dict(defines),
                    named_compile_time_args={"tiles_per_batch": 1},
                    runtime_arg_names=["num_tiles", "start_id", "scaler_bits"],
                    runtime_args={core: [src.num_pages, 0, scaler_bits]}, dfb_bindings={"in0": CB_IN, "scaler": CB_SCALER},
                    tensor_bindings={"src": TensorBinding(tuple(src.accessor_args()), src.address)},
                    noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(WRITER), Role.RISCV_0, cores, runtime_arg_names=["num_pages", "start_id"],
                    runtime_args={core: [nc, 0]}, dfb_bindings={"out": CB_OUT},
                    tensor_bindings={"dst": TensorBinding(tuple(dst.accessor_args()), dst.address)},
                    noc=DRAM_WRITE_NOC)
    compute = Kernel(kernel_path(COMPUTE), Role.COMPUTE, cores, defines=dict(defines),
                     named_compile_time_args={"enable_fp32_sfpu": 0}, runtime_arg_names=["Ht", "Wt", "NC"],
                     runtime_args={core: [ht, wt, nc]}, dfb_bindings={"in0": CB_IN, "scaler": CB_SCALER, "out": CB_OUT},
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=fp32))
    return Program(kernels=[reader, writer, compute], circular_buffers=cbs, name=f"upstream_reduce_hw_{op}")


def reduce_h_program(src, dst, op: str, *, scaler: float = 1.0, dest_tiles: int = 8) -> Program:
    """src [batch, H, W] -> dst [batch, 32, W] whose row 0 holds op down each column, times `scaler`:
    reduce.cpp with REDUCE_DIM = REDUCE_COL on one core, fed column chunk by column chunk by the H
    factory's reader (reader_unary_transpose_wh_universal_input_cols_partitioned.cpp: for each chunk of
    up to DEST_AUTO_LIMIT columns, the chunk's tiles row by row; args col_start_tile_id,
    curr_col_in_batch, num_cols, scaler_bits at run time, Ht, Wt, HtWt, use_welford = 0,
    enable_fp32_sfpu = 0, tiles_per_batch = 1, num_h_slices = 1, slice_Ht = Ht at compile time). The
    compute kernel sees the core's columns as its Wt (args Ht, num_cols, NC = 1). in0 holds two chunks of
    dest_tiles tiles (DEST_AUTO_LIMIT with bf16 DST and half sync)."""
    if op not in POOLS:
        raise ValueError(f"op must be one of {sorted(POOLS)}")
    ht, wt = src.tiles_h, src.tiles_w
    nc = src.num_pages // (ht * wt)
    if dst.num_pages != nc * wt:
        raise ValueError("the output has one tile per column of tiles")
    cores = CoreRangeSet.of([(0, 0)])
    core = next(iter(cores.cores()))
    fp32 = src.data_format == DataFormat.Float32
    scaler_fmt = DataFormat.Float32 if fp32 else DataFormat.Float16_b
    cbs = [CircularBuffer(CB_IN, src.data_format, src.page_size, 2 * dest_tiles, cores),
           CircularBuffer(CB_SCALER, scaler_fmt, scaler_fmt.tile_bytes, 1, cores),
           CircularBuffer(CB_OUT, dst.data_format, dst.page_size, 2, cores)]
    defines = {"REDUCE_OP": POOLS[op], "REDUCE_DIM": "ckernel::ReduceDim::REDUCE_COL"}
    scaler_bits = int(np.float32(scaler).view(np.uint32))
    cols = nc * wt
    # The reader sizes its chunks by the compute kernel's DST capacity, which a data-movement kernel learns
    # from the factory's defines.
    reader_defines = {**defines, "ENABLE_FP32_DEST_ACC": "1" if fp32 else "0", "DST_SYNC_FULL": "0"}
    reader = Kernel(kernel_path(H_READER), Role.RISCV_1, cores, defines=reader_defines,
                    named_compile_time_args={"Ht": ht, "Wt": wt, "HtWt": ht * wt, "use_welford": 0,
                                             "enable_fp32_sfpu": 0, "tiles_per_batch": 1, "num_h_slices": 1,
                                             "slice_Ht": ht},
                    runtime_arg_names=["col_start_tile_id", "curr_col_in_batch", "num_cols", "scaler_bits"],
                    runtime_args={core: [0, 0, cols, scaler_bits]}, dfb_bindings={"in0": CB_IN, "scaler": CB_SCALER},
                    tensor_bindings={"src": TensorBinding(tuple(src.accessor_args()), src.address)},
                    noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(WRITER), Role.RISCV_0, cores, runtime_arg_names=["num_pages", "start_id"],
                    runtime_args={core: [cols, 0]}, dfb_bindings={"out": CB_OUT},
                    tensor_bindings={"dst": TensorBinding(tuple(dst.accessor_args()), dst.address)},
                    noc=DRAM_WRITE_NOC)
    compute = Kernel(kernel_path(COMPUTE), Role.COMPUTE, cores, defines=dict(defines),
                     named_compile_time_args={"enable_fp32_sfpu": 0}, runtime_arg_names=["Ht", "Wt", "NC"],
                     runtime_args={core: [ht, cols, 1]}, dfb_bindings={"in0": CB_IN, "scaler": CB_SCALER, "out": CB_OUT},
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=fp32))
    return Program(kernels=[reader, writer, compute], circular_buffers=cbs, name=f"upstream_reduce_h_{op}")


def _reduce_check(device, build, x_shape, out_shape, ref_fn, pick, seed) -> dict:
    rng = np.random.default_rng(seed)
    src = device.upload(rng.standard_normal(x_shape).astype(np.float32), DataFormat.Float16_b)
    dst = device.allocate(out_shape, DataFormat.Float16_b)
    try:
        x = device.download(src).astype(np.float64)
        device.run(build(src, dst))
        return expect_close(ref_fn(x), pick(device.download(dst)), "out", 0.9999, 1e-2)
    finally:
        device.free(src)
        device.free(dst)


@register("reduction/reduce_w_sum_b2_64x96", "reduction", (READER, COMPUTE, WRITER))
def _reduce_w_sum(device) -> dict:
    return _reduce_check(device, lambda s, d: reduce_w_program(s, d, "sum", grid=(2, 1)), (2, 64, 96), (2, 64, 32),
                         lambda x: x.sum(axis=-1), lambda o: o[..., 0], 1)


@register("reduction/reduce_h_max_b2_96x160", "reduction", (H_READER, COMPUTE, WRITER))
def _reduce_h_max(device) -> dict:
    return _reduce_check(device, lambda s, d: reduce_h_program(s, d, "max"), (2, 96, 160), (2, 32, 160),
                         lambda x: x.max(axis=-2), lambda o: o[:, 0, :], 2)
