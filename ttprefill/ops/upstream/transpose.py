"""tt-metal's transpose WH compute kernel (ttnn.transpose(x, -2, -1) of a tiled interleaved tensor).

Compute kernel (ttnn 0.81.1): data_movement/transpose/device/kernels/compute/transpose_wh.cpp, as the
WH program factory sets it up: input CB c_0 (the input's format, two tiles), output CB c_16 (the
output's format, two tiles), runtime arg 0 = the core's tile count (NHtWt); fp32 DST when the input is
Float32; tiles split over cores as split_work_to_cores does.

The factory's reader (reader_unary_transpose_wh_interleaved_start_id.cpp) walks each batch's tiles
column by column (NWH order) and uses the Metal 2.0 named bindings, which Program cannot carry yet. Here
tt-metal's plain interleaved page reader (eltwise/unary reader_unary_interleaved_start_id.cpp) streams
the pages in order instead, and `nwh_tile_order` lays the input's tiles out in DRAM in the order the
factory's reader would visit them; the writer is the factory's (eltwise/unary
writer_unary_interleaved_start_id.cpp), writing the transposed tiles in output order. Reader on NoC 0,
writer on NoC 1, as the factory's create_reader_datamovement_config / create_writer_datamovement_config.
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
)

from . import kernel_path
from .data_movement import UNARY_READER, UNARY_WRITER, split_work_to_cores
from .registry import ConformanceError, register

from ttprefill.hw import TILE

COMPUTE = "data_movement/transpose/device/kernels/compute/transpose_wh.cpp"
CB_IN, CB_OUT = 0, 16


def nwh_tile_order(x: np.ndarray) -> np.ndarray:
    """x [..., H, W] with its 32x32 tiles reordered so that consecutive tile slots walk each batch's
    tiles down the columns (the factory reader's visiting order); returned as an [..., H, W] array whose
    row-major tile order is that sequence."""
    *lead, h, w = x.shape
    ht, wt = h // TILE, w // TILE
    tiles = x.reshape(*lead, ht, TILE, wt, TILE).swapaxes(-3, -2)  # [..., ht, wt, 32, 32]
    seq = tiles.swapaxes(-4, -3).reshape(*lead, ht * wt, TILE, TILE)  # column-major tile sequence
    return seq.reshape(*lead, ht, wt, TILE, TILE).swapaxes(-3, -2).reshape(x.shape)


def transpose_wh_program(src, dst, *, grid: tuple[int, int] = (1, 1)) -> Program:
    """src: the input's tiles in NWH order (nwh_tile_order); dst: the [..., W, H] output."""
    if src.num_pages != dst.num_pages:
        raise ValueError("transpose keeps the tile count")
    work, start = [], 0
    for core, n in split_work_to_cores(grid, src.num_pages, row_major=True):
        work.append((core, n, start))
        start += n
    cores = CoreRangeSet.of([c for c, _, _ in work])
    cbs = [
        CircularBuffer(CB_IN, src.data_format, src.page_size, 2, cores),
        CircularBuffer(CB_OUT, dst.data_format, dst.page_size, 2, cores),
    ]
    reader = Kernel(kernel_path(UNARY_READER), Role.RISCV_1, cores, src.accessor_args(),
                    runtime_args={c: [src.address, n, s] for c, n, s in work}, noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(UNARY_WRITER), Role.RISCV_0, cores, [CB_OUT, *dst.accessor_args()],
                    runtime_args={c: [dst.address, n, s] for c, n, s in work}, noc=DRAM_WRITE_NOC)
    fp32 = src.data_format in (DataFormat.Float32, DataFormat.UInt32)
    compute = Kernel(kernel_path(COMPUTE), Role.COMPUTE, cores, runtime_args={c: [n] for c, n, _ in work},
                     compute_config=ComputeConfig(
                         math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=fp32,
                         # An fp32 input unpacks straight to DST (transpose_wh's 32-bit path), not as TF32.
                         unpack_to_dest_fp32=frozenset({CB_IN}) if src.data_format is DataFormat.Float32 else frozenset()))
    return Program(kernels=[reader, writer, compute], circular_buffers=cbs, name="upstream_transpose_wh")


@register("data_movement/transpose_wh_fp32_b2_64x96", "data_movement", (UNARY_READER, COMPUTE, UNARY_WRITER))
def _transpose_wh(device) -> dict:
    x = np.random.default_rng(1).standard_normal((2, 64, 96)).astype(np.float32)
    src = device.upload(nwh_tile_order(x), DataFormat.Float32)
    dst = device.allocate((2, 96, 64), DataFormat.Float32)
    try:
        device.run(transpose_wh_program(src, dst, grid=(2, 2)))
        if not np.array_equal(device.download(dst), np.swapaxes(x, -1, -2)):
            raise ConformanceError("the transpose is not exact")
        return {"exact": True}
    finally:
        device.free(src)
        device.free(dst)
