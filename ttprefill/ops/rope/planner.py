"""Work split of a partial RoPE: units (token tile row, head), row-major, in even contiguous ranges
over the grid, so a core reads each token row's cos/sin once for all the heads it has of that row."""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.hw import compute_cores

from .shapes import RopeShape

INPUT_BUFFERING = 2
OUT_BUFFERING = 2  # units of rotated tiles in flight to the writer


@dataclass(frozen=True)
class RopePlan:
    shape: RopeShape
    core_units: tuple[int, ...]

    @property
    def num_cores(self) -> int:
        return len(self.core_units)


def plan_rope(shape: RopeShape, *, max_cores: int | None = None) -> RopePlan:
    cores = min(max_cores if max_cores is not None else compute_cores(), shape.units)  # default: the compute grid
    base, extra = divmod(shape.units, cores)
    return RopePlan(shape, tuple(base + (i < extra) for i in range(cores)))
