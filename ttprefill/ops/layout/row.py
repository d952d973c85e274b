"""Rows of a tiled tensor as row-major rows on the device (kernels/layout/row_extract_*.cpp), so only
those rows cross to the host: the last token's logits are one row of the LM head's output tile row; the
GDN conv rows before every checkpoint of a chunk go into one tensor, brought up in one read.

DeviceTensor pages are tile-sized; a row-major row of `width` bf16 values is held in ceil(width / 1024)
such pages back to back (1024 values each, its row-major bytes), the way the upstream tilize and untilize
programs hold row-major data here. A tile row's 32 x 32 tiles keep row r in two faces, 16 values in each,
so the reader takes 64 bytes of each tile and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    CircularBuffer,
    CoreRangeSet,
    DataFormat,
    Kernel,
    Program,
    Role,
    split_units,
)
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import TILE

KERNELS = KERNELS_DIR / "layout"
FACE = 16
BF16 = DataFormat.Float16_b
VALUES_PER_PAGE = BF16.tile_bytes // 2  # a row-major page: 1024 bf16 values, the row's part in 32 tiles
BUFFERING = 2  # output pages in flight between reader and writer


class RowExtractError(ValueError):
    """A row extraction the tensors cannot take; the message names the mismatch."""


@dataclass
class DeviceRow:
    """A row-major bf16 row of `width` values in device DRAM: pages of 1024 values, the last one partly used."""

    tensor: DeviceTensor
    width: int

    @classmethod
    def allocate(cls, device, width: int) -> "DeviceRow":
        if width < 1:
            raise RowExtractError(f"a row needs a positive width; got {width}")
        pages = -(-width // VALUES_PER_PAGE)
        return cls(device.allocate((TILE, TILE * pages), BF16), width)

    @property
    def nbytes(self) -> int:
        """Bytes a download moves: whole pages."""
        return self.tensor.num_pages * self.tensor.page_size

    def download(self, device) -> np.ndarray:
        """The row's values as fp32 (bf16 exact); reads the row's pages only."""
        data = np.ascontiguousarray(device.read_pages(self.tensor, 0, self.tensor.num_pages), np.uint8)
        bits = data.view(np.uint16)[: self.width].astype(np.uint32) << 16
        return bits.view(np.float32)

    def free(self, device) -> None:
        device.free(self.tensor)


@dataclass
class DeviceRows:
    """`count` row-major bf16 rows of `width` values each in one device tensor, each row in whole pages of 1024
    values (its last page partly used), the rows back to back: one read brings them all up."""

    tensor: DeviceTensor
    width: int
    count: int

    @classmethod
    def allocate(cls, device, width: int, count: int) -> "DeviceRows":
        if width < 1 or count < 1:
            raise RowExtractError(f"rows need a positive width and count; got width {width}, count {count}")
        return cls(device.allocate((TILE, TILE * count * _pages_per_row(width)), BF16), width, count)

    @property
    def pages_per_row(self) -> int:
        return _pages_per_row(self.width)

    @property
    def nbytes(self) -> int:
        """Bytes a download moves: every page of the tensor (all of them hold rows)."""
        return self.tensor.num_pages * self.tensor.page_size

    def download(self, device) -> np.ndarray:
        """[count, width] fp32 (bf16 exact), in one read of the tensor's pages."""
        data = np.ascontiguousarray(device.read_pages(self.tensor, 0, self.tensor.num_pages), np.uint8)
        bits = data.view(np.uint16).reshape(self.count, self.pages_per_row * VALUES_PER_PAGE)[:, : self.width]
        return (bits.astype(np.uint32) << 16).view(np.float32)

    def free(self, device) -> None:
        device.free(self.tensor)


def _pages_per_row(width: int) -> int:
    return -(-width // VALUES_PER_PAGE)


def rows_extract_program(src: DeviceTensor, rows, dst: DeviceTensor, width: int, *,
                         max_cores: int | None = None) -> Program:
    """dst <- rows `rows` of src [R, W] (bf16, tiled), all W values (width == W), each in whole row-major
    pages, in the order listed; dst holds at least len(rows) rows of pages."""
    rows = [int(r) for r in rows]
    if src.data_format is not BF16 or len(src.shape) != 2:
        raise RowExtractError(f"the source must be a 2-D Float16_b tensor; got {list(src.shape)} "
                              f"{src.data_format.name}")
    n_rows, src_width = src.shape
    if not rows:
        raise RowExtractError("no rows to extract: list at least one")
    bad = [r for r in rows if not 0 <= r < n_rows]
    if bad:
        raise RowExtractError(f"row {bad[0]} is outside the source's {n_rows} rows")
    if width != src_width:
        raise RowExtractError(f"the destination row holds {width} values; the source rows have {src_width}")
    per_row = _pages_per_row(width)
    pages = per_row * len(rows)
    if dst.num_pages < pages:
        raise RowExtractError(f"the destination has {dst.num_pages} pages; {len(rows)} rows of {width} values "
                              f"need {pages}")
    ranges = {core: [first, count] for core, first, count in split_units(pages, max_cores)}
    core_set = CoreRangeSet.of(ranges)
    row_args = []
    for row in rows:
        r = row % TILE
        row_args += [(row // TILE) * src.tiles_w, 2 * (r // FACE) * FACE * FACE * 2 + (r % FACE) * FACE * 2]
    reader = Kernel(KERNELS / "row_extract_reader.cpp", Role.RISCV_1, core_set, src.accessor_args(),
                    common_runtime_args=[src.address, src.tiles_w, per_row] + row_args,
                    runtime_args=dict(ranges), noc=DRAM_READ_NOC)
    writer = Kernel(KERNELS / "row_extract_writer.cpp", Role.RISCV_0, core_set, dst.accessor_args(),
                    common_runtime_args=[dst.address], runtime_args=dict(ranges), noc=DRAM_WRITE_NOC)
    cbs = [CircularBuffer(0, BF16, BF16.tile_bytes, BUFFERING, core_set)]
    name = f"row_extract_w{width}" + (f"_x{len(rows)}" if len(rows) > 1 else "")
    return Program([reader, writer], cbs, inputs={"src": src}, outputs={"dst": dst}, name=name)


def row_extract_program(src: DeviceTensor, row: int, dst: DeviceRow, *, max_cores: int | None = None) -> Program:
    """dst <- row `row` of src [R, W] (bf16, tiled), all W values (dst.width == W)."""
    return rows_extract_program(src, [row], dst.tensor, dst.width, max_cores=max_cores)


def extract_row(device, src: DeviceTensor, row: int, dst: DeviceRow | None = None, *,
                reports: list | None = None) -> DeviceRow:
    """Row `row` of src [R, W] as a DeviceRow (allocated here unless given); the caller frees it."""
    out = dst if dst is not None else DeviceRow.allocate(device, src.shape[1])
    _run(device, lambda: row_extract_program(src, row, out), out if dst is None else None, reports)
    return out


def extract_rows(device, src: DeviceTensor, rows, *, reports: list | None = None) -> DeviceRows:
    """Rows `rows` of src [R, W] as one DeviceRows (in that order), by one program; the caller frees it."""
    rows = list(rows)
    if not rows:
        raise RowExtractError("no rows to extract: list at least one")
    out = DeviceRows.allocate(device, src.shape[1], len(rows))
    _run(device, lambda: rows_extract_program(src, rows, out.tensor, out.width), out, reports)
    return out


def _run(device, build, made, reports) -> None:
    """Builds the program (build() checks the request) and runs it; frees `made` (what the caller allocated for
    it) if either step fails, so a refused request leaves the device's memory as it found it."""
    try:
        report = device.run(build())
    except Exception:
        if made is not None:
            made.free(device)
        raise
    if reports is not None:
        reports.append(report)
