"""Work split and buffering of a grouped RMSNorm.

A unit is one token tile row of one group: its tiles are read, normalised and written together.
Units are split over the grid as evenly as possible in contiguous ranges (neighbouring units share
DRAM rows, and the cost of every unit is the same). x (and z) are double-buffered, a unit's worth of
tiles each, when that fits L1 next to the resident weight rows; else single-buffered.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.program import DataFormat
from ttprefill.hw import L1_CB_BUDGET_BYTES, cb_aligned, compute_cores

from .shapes import NormShape, NormShapeError

# y leaves the compute kernel a batch of up to 4 tiles (one fp32 DST acquire) at a time; two batches in flight.
OUT_BUFFERING = 8
ACTIVATION_FORMAT = DataFormat.Float16_b
WEIGHT_FORMAT = DataFormat.Float32  # 1 + w (zero-centred) or w: fp32, so 1 + w keeps w's bits


@dataclass(frozen=True)
class NormPlan:
    shape: NormShape
    core_units: tuple[int, ...]  # units per core, cores in row-major order of the grid
    input_buffering: int

    @property
    def num_cores(self) -> int:
        return len(self.core_units)


def l1_bytes(shape: NormShape, input_buffering: int) -> int:
    g = shape.group_tiles
    inputs = (2 if shape.gated else 1) * cb_aligned(ACTIVATION_FORMAT.tile_bytes * g * input_buffering)
    return (inputs + cb_aligned(WEIGHT_FORMAT.tile_bytes * g) + cb_aligned(ACTIVATION_FORMAT.tile_bytes)
            + 2 * cb_aligned(DataFormat.Float32.tile_bytes) + cb_aligned(ACTIVATION_FORMAT.tile_bytes * OUT_BUFFERING))


def plan_norm(shape: NormShape, *, max_cores: int | None = None,
              l1_budget: int = L1_CB_BUDGET_BYTES) -> NormPlan:
    buffering = next((b for b in (2, 1) if l1_bytes(shape, b) <= l1_budget), None)
    if buffering is None:
        raise NormShapeError(f"a group of {shape.group_tiles} tiles needs {l1_bytes(shape, 1)} B of L1, more than "
                             f"the {l1_budget} B a core has; norm narrower groups")
    cores = min(max_cores if max_cores is not None else compute_cores(), shape.units)  # default: the compute grid
    base, extra = divmod(shape.units, cores)
    return NormPlan(shape, tuple(base + (i < extra) for i in range(cores)), buffering)
