"""Programs around tt-metal's own interleaved page readers and writers (the data-movement object API).

`unary_interleaved_program` mirrors ttnn's eltwise unary program factory for interleaved tiled
tensors (ttnn/cpp/ttnn/operations/eltwise/unary/device/unary_program_factory.cpp, legacy-API path):

- circular buffers c_0 (input format) and c_2 (output format), two pages each, on every core used;
- reader `reader_unary_interleaved_start_id.cpp` on RISCV_1: compile-time args TensorAccessorArgs(input),
  runtime args {input address, pages, first page};
- writer `writer_unary_interleaved_start_id.cpp` on RISCV_0: compile-time args {c_2, TensorAccessorArgs(output)},
  runtime args {output address, pages, first page};
- compute (by default `eltwise_sfpu.cpp`; no SFPU_OP_CHAIN_0 define makes it a copy): runtime args
  {pages, packed scalar 1, packed scalar 2}, HiFi4;
- pages split over the cores as tt-metal's split_work_to_cores does, row-major.

`copy_interleaved_program` is the same shape around data_movement/copy's reader/writer pair
(data_movement/copy/device/copy_same_memory_config_program_factory.cpp, tiled and without a format
change): reader_unary_start_id.cpp and writer_unary_start_id.cpp, the writer taking the buffer it drains
(c_0) as its first compile-time arg.

NoCs: every factory mirrored here gives its reader tt-metal's reader configuration and its writer the
writer configuration (ReaderDataMovementConfig / ReaderConfigDescriptor / create_reader_datamovement_config
and the writer counterparts), which on Wormhole put the reader on NoC 0 and the writer on NoC 1
(DRAM_READ_NOC, DRAM_WRITE_NOC).
"""

from __future__ import annotations

from pathlib import Path

from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    CircularBuffer,
    TensorBinding,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    Kernel,
    MathFidelity,
    Program,
    Role,
)

from . import kernel_path

UNARY_KERNELS = "eltwise/unary/device/kernels"
UNARY_READER = f"{UNARY_KERNELS}/dataflow/reader_unary_interleaved_start_id.cpp"
UNARY_WRITER = f"{UNARY_KERNELS}/dataflow/writer_unary_interleaved_start_id.cpp"
UNARY_COMPUTE = f"{UNARY_KERNELS}/compute/eltwise_sfpu.cpp"
COPY_KERNELS = "data_movement/copy/device/kernels"
COPY_READER = f"{COPY_KERNELS}/reader_unary_start_id.cpp"
COPY_WRITER = f"{COPY_KERNELS}/writer_unary_start_id.cpp"
METAL2_READER = f"{UNARY_KERNELS}/dataflow/reader_unary_interleaved_start_id_metal2.cpp"
METAL2_WRITER = f"{UNARY_KERNELS}/dataflow/writer_unary_interleaved_start_id_metal2.cpp"
METAL2_COPY_COMPUTE = "data_movement/sharded/device/kernels/compute/eltwise_copy_metal2.cpp"
CONCAT_READER = "data_movement/concat/device/kernels/dataflow/reader_concat_interleaved_start_id.cpp"

CB_IN, CB_OUT = 0, 2
CB_COPY_OUT = 16


def split_work_to_cores(grid: tuple[int, int], units: int, *, row_major: bool) -> list[tuple[CoreCoord, int]]:
    """tt-metal's split_work_to_cores over a grid from (0, 0): as many cores as units (at most the
    grid), in row-major (x fastest) or column-major (y fastest) order; the first `units % cores` of
    them take one unit more than the rest."""
    gx, gy = grid
    cores = min(units, gx * gy)
    if cores == 0:
        return []
    base, extra = divmod(units, cores)
    order = [CoreCoord(i % gx, i // gx) if row_major else CoreCoord(i // gy, i % gy) for i in range(cores)]
    return [(c, base + (1 if i < extra else 0)) for i, c in enumerate(order)]


def _split(grid: tuple[int, int], pages: int, *, row_major: bool,
           backwards: bool = False) -> list[tuple[CoreCoord, int, int]]:
    """(core, pages, first page) per core; walking backwards, each core starts at its highest page."""
    out, start = [], pages - 1 if backwards else 0
    for core, n in split_work_to_cores(grid, pages, row_major=row_major):
        out.append((core, n, start))
        start += -n if backwards else n
    return out


def unary_interleaved_program(src, dst, *, grid: tuple[int, int] = (1, 1), compute_source: Path | None = None,
                              defines: dict[str, str] | None = None, fp32_dest_acc_en: bool = False,
                              name: str = "upstream_unary") -> Program:
    """src and dst: DeviceTensors of the same page count (tiled, interleaved in DRAM)."""
    work = _split(grid, src.num_pages, row_major=True)
    cores = CoreRangeSet.of([c for c, _, _ in work])
    cbs = [
        CircularBuffer(CB_IN, src.data_format, src.page_size, 2, cores),
        CircularBuffer(CB_OUT, dst.data_format, dst.page_size, 2, cores),
    ]
    reader = Kernel(kernel_path(UNARY_READER), Role.RISCV_1, cores, src.accessor_args(),
                    runtime_args={c: [src.address, n, s] for c, n, s in work}, noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(UNARY_WRITER), Role.RISCV_0, cores, [CB_OUT, *dst.accessor_args()],
                    runtime_args={c: [dst.address, n, s] for c, n, s in work}, noc=DRAM_WRITE_NOC)
    compute = Kernel(compute_source or kernel_path(UNARY_COMPUTE), Role.COMPUTE, cores, defines=dict(defines or {}),
                     runtime_args={c: [n, 0, 0] for c, n, _ in work},
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=fp32_dest_acc_en))
    return Program(kernels=[reader, writer, compute], circular_buffers=cbs, inputs={"input": src},
                   outputs={"output": dst}, name=name)


def copy_interleaved_program(src, dst, *, grid: tuple[int, int] = (1, 1), backwards: bool = False,
                             name: str = "upstream_copy") -> Program:
    """data_movement/copy's same-memory-config factory for tiled tensors of one data format: the writer
    drains the reader's buffer c_0, no compute kernel; cores in column-major order; BACKWARDS walks the
    pages from the last one down."""
    if src.data_format != dst.data_format or src.num_pages != dst.num_pages:
        raise ValueError("copy_interleaved_program copies pages as they are: same format and page count needed")
    work = _split(grid, src.num_pages, row_major=False, backwards=backwards)
    cores = CoreRangeSet.of([c for c, _, _ in work])
    defines = {"BACKWARDS": "1"} if backwards else {}
    cbs = [CircularBuffer(CB_IN, src.data_format, src.page_size, 2, cores)]
    reader = Kernel(kernel_path(COPY_READER), Role.RISCV_1, cores, src.accessor_args(), defines=dict(defines),
                    runtime_args={c: [src.address, n, s] for c, n, s in work}, noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(COPY_WRITER), Role.RISCV_0, cores, [CB_IN, *dst.accessor_args()],
                    defines=dict(defines), runtime_args={c: [dst.address, n, s] for c, n, s in work},
                    noc=DRAM_WRITE_NOC)
    return Program(kernels=[reader, writer], circular_buffers=cbs, inputs={"input": src}, outputs={"output": dst},
                   name=name)


def _column_major_ranges_in_row_order(grid: tuple[int, int], cores: int) -> list[CoreCoord]:
    """tt-metal's corerange_to_cores(num_cores_to_corerangeset(cores, grid), cores, row_wise=true): the
    column-major set as ranges (whole columns, then the partial one), each walked row by row."""
    gx, gy = grid
    full, rest = divmod(cores, gy)
    out = [CoreCoord(x, y) for y in range(gy) for x in range(full)] if full else []
    out += [CoreCoord(full, y) for y in range(rest)]
    return out


def copy_default_tilized_program(src, dst, *, grid: tuple[int, int] = (1, 1),
                                 name: str = "upstream_copy_metal2") -> Program:
    """data_movement/copy's DefaultTilized factory (copy_default_tilized_program_factory.cpp), a Metal 2.0
    program: the unary reader/writer _metal2 kernels bound to dataflow buffer "in" (c_0) and, when the
    data format changes, the eltwise_copy_metal2 compute kernel from "in" to "out" (c_16). Pages are
    split as split_work_to_cores does (column-major groups), start ids handed out row by row."""
    convert = src.data_format != dst.data_format
    counts = dict(split_work_to_cores(grid, src.num_pages, row_major=False))
    ordered = _column_major_ranges_in_row_order(grid, len(counts))
    work, start = [], 0
    for core in ordered:
        work.append((core, counts[core], start))
        start += counts[core]
    cores = CoreRangeSet.of(ordered)
    cbs = [CircularBuffer(CB_IN, src.data_format, src.aligned_page_size, 2, cores)]
    writer_dfb = CB_IN
    if convert:
        cbs.append(CircularBuffer(CB_COPY_OUT, dst.data_format, dst.aligned_page_size, 2, cores))
        writer_dfb = CB_COPY_OUT
    reader = Kernel(kernel_path(METAL2_READER), Role.RISCV_1, cores, runtime_arg_names=["num_pages", "start_id"],
                    runtime_args={c: [n, s] for c, n, s in work}, dfb_bindings={"in": CB_IN},
                    tensor_bindings={"src": TensorBinding(tuple(src.accessor_args()), src.address)}, noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(METAL2_WRITER), Role.RISCV_0, cores, runtime_arg_names=["num_pages", "start_id"],
                    runtime_args={c: [n, s] for c, n, s in work}, dfb_bindings={"out": writer_dfb},
                    tensor_bindings={"dst": TensorBinding(tuple(dst.accessor_args()), dst.address)}, noc=DRAM_WRITE_NOC)
    kernels = [reader, writer]
    if convert:
        kernels.append(Kernel(kernel_path(METAL2_COPY_COMPUTE), Role.COMPUTE, cores,
                              runtime_arg_names=["per_core_tile_cnt"], runtime_args={c: [n] for c, n, _ in work},
                              dfb_bindings={"in": CB_IN, "out": CB_COPY_OUT}, compute_config=ComputeConfig()))
    return Program(kernels=kernels, circular_buffers=cbs, inputs={"input": src}, outputs={"output": dst}, name=name)


def concat_width_program(inputs, dst, *, name: str = "upstream_concat_width") -> Program:
    """Tiled inputs of the same height and format concatenated along the last dim, on one core: tt-metal's
    Metal 2.0 concat reader (tensor binding sequence "inputs"; per output tile row it takes each input's
    width in tiles, round robin) and the unary _metal2 writer. Runtime args as the reader documents them:
    num_tiles, start_tensor, start_tensor_id, then the varargs: each input's tiles per block (its width
    in tiles), then each input's first tile id."""
    if any(t.data_format != dst.data_format or t.tiles_h != dst.tiles_h for t in inputs):
        raise ValueError("concat_width_program: inputs must share the output's format and height in tiles")
    if sum(t.tiles_w for t in inputs) != dst.tiles_w:
        raise ValueError("concat_width_program: the inputs' widths must add up to the output's")
    core = CoreCoord(0, 0)
    cores = CoreRangeSet.of([core])
    n = dst.num_pages
    reader = Kernel(kernel_path(CONCAT_READER), Role.RISCV_1, cores,
                    runtime_arg_names=["num_tiles", "start_tensor", "start_tensor_id"],
                    runtime_args={core: [n, 0, 0, *(t.tiles_w for t in inputs), *(0 for _ in inputs)]},
                    dfb_bindings={"in": CB_IN},
                    tensor_bindings={"inputs": tuple(TensorBinding(tuple(t.accessor_args()), t.address) for t in inputs)},
                    noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(METAL2_WRITER), Role.RISCV_0, cores, runtime_arg_names=["num_pages", "start_id"],
                    runtime_args={core: [n, 0]}, dfb_bindings={"out": CB_IN},
                    tensor_bindings={"dst": TensorBinding(tuple(dst.accessor_args()), dst.address)}, noc=DRAM_WRITE_NOC)
    cbs = [CircularBuffer(CB_IN, dst.data_format, dst.page_size, 2, cores)]
    return Program(kernels=[reader, writer], circular_buffers=cbs,
                   inputs={f"input{i}": t for i, t in enumerate(inputs)}, outputs={"output": dst}, name=name)
