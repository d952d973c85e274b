"""Host side of the norms: resident weight rows and the ops on DeviceTensors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ttprefill.device.tensor import DeviceTensor

from .planner import ACTIVATION_FORMAT, WEIGHT_FORMAT, plan_norm
from .program import norm_program
from .shapes import TILE, NormShape, NormShapeError


@dataclass
class NormWeight:
    """A norm weight w [width] resident in DRAM as fp32 rows [32, width], every row the factor the norm
    multiplies by: 1 + w for the zero-centred norms (formed once here, in fp32, so w's bits survive),
    w itself for the gated norm."""

    rows: DeviceTensor
    width: int
    zero_centred: bool

    @classmethod
    def upload(cls, device, w: np.ndarray, *, zero_centred: bool = True) -> "NormWeight":
        w = np.asarray(w, np.float32)
        if w.ndim != 1:
            raise NormShapeError(f"a norm weight is one vector [width]; got shape {w.shape}")
        factor = (1.0 + w.astype(np.float64)).astype(np.float32) if zero_centred else w
        rows = np.broadcast_to(factor, (TILE, w.shape[0])).copy()
        return cls(device.upload(rows, WEIGHT_FORMAT), w.shape[0], zero_centred)

    def free(self) -> None:
        self.rows.device.free(self.rows)


def _run(device, shape: NormShape, x, weight: NormWeight, z, out, reports) -> DeviceTensor:
    if weight.zero_centred == shape.gated:
        raise NormShapeError("the zero-centred norms take NormWeight.upload(w) (1 + w), the gated norm "
                             "NormWeight.upload(w, zero_centred=False) (w itself)")
    if weight.width != shape.group_width:
        raise NormShapeError(f"the weight has {weight.width} entries; this norm's groups are {shape.group_width} wide")
    if out is None:
        out = device.allocate((shape.tokens, shape.out_width), ACTIVATION_FORMAT)
    report = device.run(norm_program(plan_norm(shape), x, weight.rows, out, z))
    if reports is not None:
        reports.append(report)
    return out


def rms_norm(device, x: DeviceTensor, weight: NormWeight, eps: float, *, group_width: int | None = None,
             groups: int | None = None, group_stride: int | None = None, x_col0: int = 0,
             last_tile_row_only: bool = False, out: DeviceTensor | None = None,
             reports: list | None = None) -> DeviceTensor:
    """Zero-centred RMSNorm x * rsqrt(mean(x^2) + eps) * (1 + w) of x [tokens, width].

    Default: one group, the whole row. Per head: group_width = head_dim (groups = width / head_dim
    unless given); group_stride and x_col0 pick strided heads (q_norm over q_proj's query halves:
    group_width D, group_stride 2 D). last_tile_row_only: norm only the tile row holding the last
    token (the final norm before the LM head): y is [tokens - 32 * ((tokens - 1) // 32), width], the
    last token its last row."""
    tokens, width = x.shape
    row0 = (tokens - 1) // TILE if last_tile_row_only else 0
    tokens -= row0 * TILE
    gw = width if group_width is None else group_width
    if groups is None:  # as many whole groups as fit from x_col0 on
        groups = max(1, (width - x_col0 - gw) // (gw if group_stride is None else group_stride) + 1)
    shape = NormShape(tokens, width, gw, groups, group_stride, x_col0, gated=False, eps=eps, x_tile_row0=row0)
    return _run(device, shape, x, weight, None, out, reports)


def gated_rms_norm(device, x: DeviceTensor, z: DeviceTensor, weight: NormWeight, eps: float, *, group_width: int,
                   out: DeviceTensor | None = None, reports: list | None = None) -> DeviceTensor:
    """w * (x * rsqrt(mean(x^2) + eps)) * silu(z) per group of group_width columns (the GDN value heads)."""
    tokens, width = x.shape
    if width % group_width:
        raise NormShapeError(f"x's width {width} is not a whole number of {group_width}-wide groups")
    shape = NormShape(tokens, width, group_width, width // group_width, gated=True, eps=eps)
    return _run(device, shape, x, weight, z, out, reports)
