"""One row of a tiled tensor as a row-major row on the device (kernels/layout/row_extract_*.cpp), so only
that row crosses to the host: the last token's logits are one row of the LM head's output tile row.

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
    GRID_X,
    GRID_Y,
    CircularBuffer,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    Program,
    Role,
)
from ttprefill.device.tensor import DeviceTensor

KERNELS = KERNELS_DIR / "layout"
TILE = 32
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


def row_extract_program(src: DeviceTensor, row: int, dst: DeviceRow, *, max_cores: int = GRID_X * GRID_Y) -> Program:
    """dst <- row `row` of src [R, W] (bf16, tiled), all W values (dst.width == W)."""
    if src.data_format is not BF16 or len(src.shape) != 2:
        raise RowExtractError(f"the source must be a 2-D Float16_b tensor; got {list(src.shape)} "
                              f"{src.data_format.name}")
    rows, width = src.shape
    if not 0 <= row < rows:
        raise RowExtractError(f"row {row} is outside the source's {rows} rows")
    if dst.width != width:
        raise RowExtractError(f"the destination row holds {dst.width} values; the source rows have {width}")
    pages = dst.tensor.num_pages
    n_cores = min(max_cores, pages)
    base, extra = divmod(pages, n_cores)
    cores = [CoreCoord(i % GRID_X, i // GRID_X) for i in range(n_cores)]
    ranges, first = {}, 0
    for i, core in enumerate(cores):
        count = base + (i < extra)
        ranges[core] = [first, count]
        first += count
    core_set = CoreRangeSet.of(cores)
    r = row % TILE
    row_offset = 2 * (r // FACE) * FACE * FACE * 2 + (r % FACE) * FACE * 2
    reader = Kernel(KERNELS / "row_extract_reader.cpp", Role.RISCV_1, core_set, src.accessor_args(),
                    common_runtime_args=[src.address, (row // TILE) * src.tiles_w, src.tiles_w, row_offset],
                    runtime_args=dict(ranges), noc=DRAM_READ_NOC)
    writer = Kernel(KERNELS / "row_extract_writer.cpp", Role.RISCV_0, core_set, dst.tensor.accessor_args(),
                    common_runtime_args=[dst.tensor.address], runtime_args=dict(ranges), noc=DRAM_WRITE_NOC)
    cbs = [CircularBuffer(0, BF16, BF16.tile_bytes, BUFFERING, core_set)]
    return Program([reader, writer], cbs, inputs={"src": src}, outputs={"dst": dst.tensor},
                   name=f"row_extract_w{width}")


def extract_row(device, src: DeviceTensor, row: int, dst: DeviceRow | None = None, *,
                reports: list | None = None) -> DeviceRow:
    """Row `row` of src [R, W] as a DeviceRow (allocated here unless given); the caller frees it."""
    out = dst if dst is not None else DeviceRow.allocate(device, src.shape[1])
    try:
        report = device.run(row_extract_program(src, row, out))
    except Exception:
        if dst is None:
            out.free(device)
        raise
    if reports is not None:
        reports.append(report)
    return out
