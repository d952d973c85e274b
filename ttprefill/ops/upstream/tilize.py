"""tt-metal's tilize and untilize compute kernels (ttnn.tilize / ttnn.untilize of interleaved tensors,
multi-core): row-major rows <-> 32x32 tiles of 16x16 faces.

Compute kernels (ttnn 0.81.1, data_movement/):
    tilize/device/kernels/compute/tilize.cpp      compile-time args {c_0, c_16, blocks, tiles per block}
    untilize/device/kernels/compute/untilize.cpp  compile-time args {blocks, tiles per block, c_0, c_16}
both through ttnn's kernel_lib helpers (tilize_helpers / untilize_helpers), as the multi-core interleaved
factories set them up: one block is 32 rows of the tensor's full width (Wt tiles), CBs c_0 and c_16 hold
one block each in the input's and output's format, blocks split over cores with split_work_to_cores, fp32
DST and the input CB in UnpackToDestFp32 mode when the data is Float32 (Float32 values reach DST whole).

The factories' readers and writers move row-major data as sticks (one page per row), which DeviceTensor
(tiled pages only) cannot hold. Here a block of 32 rows is stored as Wt tile-sized pages of its row-major
bytes, which is exactly what the stick reader leaves in c_0 (and the stick writer takes from c_16), and
tt-metal's plain page reader and writer (eltwise/unary reader/writer_unary_interleaved_start_id.cpp) move
those pages. Reader on NoC 0, writer on NoC 1: the factories' reader and writer configurations
(create_reader_datamovement_config / create_writer_datamovement_config).
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
    float32_cbs,
)

from . import kernel_path
from .data_movement import UNARY_READER, UNARY_WRITER, split_work_to_cores
from .registry import ConformanceError, register

from ttprefill.hw import TILE

TILIZE = "data_movement/tilize/device/kernels/compute/tilize.cpp"
UNTILIZE = "data_movement/untilize/device/kernels/compute/untilize.cpp"
CB_IN, CB_OUT = 0, 16


def row_major_bytes(x: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """The row-major bytes of x in a format that has one (bf16: the high half of each fp32 word, rounded)."""
    x = np.ascontiguousarray(x, np.float32)
    if fmt == DataFormat.Float32:
        return x.view(np.uint8).reshape(-1)
    if fmt == DataFormat.Float16_b:
        bits = x.view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return rounded.astype(np.uint16).view(np.uint8).reshape(-1)
    raise ValueError(f"{fmt.name} has no row-major form")


def from_row_major_bytes(data: np.ndarray, fmt: DataFormat, shape: tuple[int, ...]) -> np.ndarray:
    data = np.ascontiguousarray(data, np.uint8)
    if fmt == DataFormat.Float32:
        return data.view(np.float32).reshape(shape)
    if fmt == DataFormat.Float16_b:
        return (data.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(shape)
    raise ValueError(f"{fmt.name} has no row-major form")


def _program(source, src, dst, ct_args, *, grid, name) -> Program:
    wt = src.tiles_w
    blocks = src.num_pages // wt
    work, first = [], 0
    for core, n in split_work_to_cores(grid, blocks, row_major=True):
        work.append((core, n, first))
        first += n
    cores = CoreRangeSet.of([c for c, _, _ in work])
    cbs = [CircularBuffer(CB_IN, src.data_format, src.page_size, wt, cores),
           CircularBuffer(CB_OUT, dst.data_format, dst.page_size, wt, cores)]
    reader = Kernel(kernel_path(UNARY_READER), Role.RISCV_1, cores, src.accessor_args(),
                    runtime_args={c: [src.address, n * wt, s * wt] for c, n, s in work}, noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(UNARY_WRITER), Role.RISCV_0, cores, [CB_OUT, *dst.accessor_args()],
                    runtime_args={c: [dst.address, n * wt, s * wt] for c, n, s in work}, noc=DRAM_WRITE_NOC)
    fp32 = src.data_format == DataFormat.Float32
    computes = []
    for count in sorted({n for _, n, _ in work}, reverse=True):
        group = CoreRangeSet.of([c for c, n, _ in work if n == count])
        computes.append(Kernel(kernel_path(source), Role.COMPUTE, group, ct_args(count, wt),
                               compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=fp32,
                                                            unpack_to_dest_fp32=float32_cbs(cbs, [CB_IN]))))
    return Program(kernels=[reader, writer, *computes], circular_buffers=cbs, name=name)


def tilize_program(src, dst, *, grid: tuple[int, int] = (1, 1)) -> Program:
    """src: pages holding the row-major bytes of the [..., H, W] tensor, Wt pages per 32 rows; dst: tiled."""
    return _program(TILIZE, src, dst, lambda n, wt: [CB_IN, CB_OUT, n, wt], grid=grid, name="upstream_tilize")


def untilize_program(src, dst, *, grid: tuple[int, int] = (1, 1)) -> Program:
    """src: tiled; dst: pages that receive the row-major bytes, Wt pages per 32 rows."""
    return _program(UNTILIZE, src, dst, lambda n, wt: [n, wt, CB_IN, CB_OUT], grid=grid, name="upstream_untilize")


def _bf16_values(seed: int, shape) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return from_row_major_bytes(row_major_bytes(x, DataFormat.Float16_b), DataFormat.Float16_b, shape)


@register("data_movement/tilize_bf16_b3_32x160", "data_movement", (UNARY_READER, TILIZE, UNARY_WRITER))
def _tilize(device) -> dict:
    x = _bf16_values(1, (3, 32, 160))
    src, dst = device.allocate(x.shape, DataFormat.Float16_b), device.allocate(x.shape, DataFormat.Float16_b)
    try:
        device.write_pages(src, 0, row_major_bytes(x, DataFormat.Float16_b))
        device.run(tilize_program(src, dst, grid=(2, 2)))
        if not np.array_equal(device.download(dst), x):
            raise ConformanceError("the tilized tiles differ from the input")
        return {"exact": True}
    finally:
        device.free(src)
        device.free(dst)


@register("data_movement/untilize_bf16_b3_32x160", "data_movement", (UNARY_READER, UNTILIZE, UNARY_WRITER))
def _untilize(device) -> dict:
    x = _bf16_values(2, (3, 32, 160))
    src, dst = device.upload(x, DataFormat.Float16_b), device.allocate(x.shape, DataFormat.Float16_b)
    try:
        device.run(untilize_program(src, dst, grid=(2, 2)))
        out = from_row_major_bytes(device.read_pages(dst, 0, dst.num_pages), DataFormat.Float16_b, x.shape)
        if not np.array_equal(out, x):
            raise ConformanceError("the untilized rows differ from the input")
        return {"exact": True}
    finally:
        device.free(src)
        device.free(dst)
