"""Tensors in device DRAM: tiled, interleaved page by page over the 12 banks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import formats
from .program import DRAM_ALIGNMENT, DataFormat


@dataclass
class DeviceTensor:
    """A tiled tensor in DRAM. Page i (tile i in row-major tile order over the last two dims,
    batched over the leading ones) sits in bank i % 12 at address + (i // 12) * aligned_page_size."""

    shape: tuple[int, ...]  # logical shape; the last two dims are padded to multiples of 32 on device
    data_format: DataFormat
    address: int
    device: object
    freed: bool = False

    @property
    def padded_shape(self) -> tuple[int, ...]:
        return formats.padded_shape(self.shape)

    @property
    def page_size(self) -> int:
        return self.data_format.tile_bytes

    @property
    def aligned_page_size(self) -> int:
        return -(-self.page_size // DRAM_ALIGNMENT) * DRAM_ALIGNMENT

    @property
    def tiles_h(self) -> int:
        return self.padded_shape[-2] // 32

    @property
    def tiles_w(self) -> int:
        return self.padded_shape[-1] // 32

    @property
    def num_pages(self) -> int:
        lead = int(np.prod(self.padded_shape[:-2], dtype=np.int64)) if len(self.shape) > 2 else 1
        return lead * self.tiles_h * self.tiles_w

    @property
    def nbytes(self) -> int:
        return self.num_pages * self.page_size

    def accessor_args(self) -> list[int]:
        """Compile-time args of a TensorAccessorArgs for this tensor: the ArgsConfig word (IsDram)
        and the aligned page size, as ttnn emits them for an interleaved DRAM buffer."""
        is_dram = 1 << 1
        return [is_dram, self.aligned_page_size]

    def __repr__(self) -> str:
        return f"DeviceTensor(shape={self.shape}, format={self.data_format.name}, address={self.address:#x})"
