"""The head-relayout program and its two uses on DeviceTensors."""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.program import (
    DRAM_READ_NOC, DRAM_WRITE_NOC, CircularBuffer, CoreRangeSet, Kernel, Program, Role,
    split_units,
)
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import TILE

KERNELS = KERNELS_DIR / "layout"
BUFFERING = 2  # heads of tiles in flight between reader and writer


class HeadLayoutError(ValueError):
    """A relayout the tensors cannot take; the message names the mismatch."""


@dataclass(frozen=True)
class HeadLayout:
    """Where tile j of head h in token tile row t sits: page t * row_stride + h * head_stride + col0 + j."""

    row_stride: int
    head_stride: int
    col0: int = 0

    @classmethod
    def token_major(cls, tensor: DeviceTensor, head_tiles: int, *, head_stride: int | None = None,
                    col0: int = 0) -> "HeadLayout":
        return cls(tensor.tiles_w, head_tiles if head_stride is None else head_stride, col0)

    @classmethod
    def heads_major(cls, tensor: DeviceTensor) -> "HeadLayout":
        if len(tensor.shape) != 3:
            raise HeadLayoutError(f"a heads-major tensor is [heads, rows, head_dim]; got {tensor.shape}")
        return cls(tensor.tiles_w, tensor.tiles_h * tensor.tiles_w)


def heads_copy_program(src: DeviceTensor, src_layout: HeadLayout, dst: DeviceTensor, dst_layout: HeadLayout, *,
                       token_tiles: int, heads: int, head_tiles: int) -> Program:
    if src.data_format != dst.data_format:
        raise HeadLayoutError(f"a relayout copies tiles: source {src.data_format.name} and destination "
                              f"{dst.data_format.name} must share a format")
    for name, t, lay in (("source", src, src_layout), ("destination", dst, dst_layout)):
        last = (token_tiles - 1) * lay.row_stride + (heads - 1) * lay.head_stride + lay.col0 + head_tiles
        if last > t.num_pages:
            raise HeadLayoutError(f"the {name} {t.shape} has {t.num_pages} tiles; this relayout reaches tile {last}")
    units = token_tiles * heads
    ranges = {core: [first, count] for core, first, count in split_units(units)}
    core_set = CoreRangeSet.of(ranges)
    fmt = src.data_format
    reader = Kernel(KERNELS / "heads_copy_reader.cpp", Role.RISCV_1, core_set, src.accessor_args(),
                    common_runtime_args=[src.address, heads, head_tiles, src_layout.row_stride,
                                         src_layout.head_stride, src_layout.col0], runtime_args=dict(ranges),
                                         noc=DRAM_READ_NOC)
    writer = Kernel(KERNELS / "heads_copy_writer.cpp", Role.RISCV_0, core_set, dst.accessor_args(),
                    common_runtime_args=[dst.address, heads, head_tiles, dst_layout.row_stride,
                                         dst_layout.head_stride, dst_layout.col0], runtime_args=dict(ranges),
                                         noc=DRAM_WRITE_NOC)
    cbs = [CircularBuffer(0, fmt, fmt.tile_bytes, BUFFERING * head_tiles, core_set)]
    return Program([reader, writer], cbs, inputs={"src": src}, outputs={"dst": dst},
                   name=f"heads_copy_t{token_tiles}_h{heads}_d{head_tiles}")


def _run(device, program, reports):
    report = device.run(program)
    if reports is not None:
        reports.append(report)


def split_heads(device, src: DeviceTensor, dst: DeviceTensor, *, heads: int, head_dim: int,
                head_stride: int | None = None, col0: int = 0, reports: list | None = None) -> DeviceTensor:
    """dst [heads, rows, head_dim] (heads-major) <- heads of src [T, width] starting at column col0, one head
    every head_stride columns (default head_dim); rows >= T; rows past T's last tile are not written."""
    if head_dim % TILE or col0 % TILE or (head_stride or 0) % TILE:
        raise HeadLayoutError(f"head_dim {head_dim}, col0 {col0} and head_stride {head_stride} must be whole tiles")
    if dst.shape[0] != heads or dst.shape[2] != head_dim or dst.tiles_h < src.tiles_h:
        raise HeadLayoutError(f"dst must be [{heads}, >= {src.shape[0]}, {head_dim}]; got {dst.shape}")
    ht = head_dim // TILE
    layout = HeadLayout.token_major(src, ht, head_stride=None if head_stride is None else head_stride // TILE,
                                    col0=col0 // TILE)
    _run(device, heads_copy_program(src, layout, dst, HeadLayout.heads_major(dst), token_tiles=src.tiles_h,
                                    heads=heads, head_tiles=ht), reports)
    return dst


def merge_heads(device, src: DeviceTensor, dst: DeviceTensor, *, reports: list | None = None) -> DeviceTensor:
    """dst [T, heads * head_dim] (token-major) <- src [heads, rows, head_dim], rows >= T."""
    heads, _, head_dim = src.shape
    if dst.shape[1] != heads * head_dim or src.tiles_h < dst.tiles_h:
        raise HeadLayoutError(f"dst must be [<= {src.shape[1]}, {heads * head_dim}]; got {dst.shape}")
    ht = head_dim // TILE
    _run(device, heads_copy_program(src, HeadLayout.heads_major(src), dst, HeadLayout.token_major(dst, ht),
                                    token_tiles=dst.tiles_h, heads=heads, head_tiles=ht), reports)
    return dst
