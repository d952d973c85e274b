"""Host side of RoPE: cos/sin tables of consecutive positions (resident for a whole context, or one chunk's)
and the op on a DeviceTensor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ttprefill.device.tensor import DeviceTensor

from .planner import plan_rope
from .program import TABLE_FORMAT, rope_program
from .shapes import SUB_TILE_ROTARY_DIMS, TILE, RopeShape, RopeShapeError


def rope_tables(positions: np.ndarray, rotary_dim: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin [T, rotary_dim] for rotate_half RoPE: angle(p, i) = p * theta^(-2 (i mod r/2) / r), in fp64."""
    if rotary_dim % 2:
        raise RopeShapeError(f"rotary_dim must be even; got {rotary_dim}")
    half = rotary_dim // 2
    inv_freq = theta ** (-np.arange(half, dtype=np.float64) * 2.0 / rotary_dim)
    angles = np.asarray(positions, np.float64)[:, None] * inv_freq[None, :]
    angles = np.concatenate([angles, angles], axis=1)
    return np.cos(angles), np.sin(angles)


def sub_tile_tables(positions: np.ndarray, rotary_dim: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """The tables of a rotation inside one tile (rotary_dim 16 or 32), [T, 32] each: y = x * cos' + s(x) * sin'
    with s(x) the tile with each rotary half moved onto the other (the reader swaps them), so cos' is cos on
    the rotary columns and 1 past them, sin' is -sin on the first half, sin on the second and 0 past them."""
    cos, sin = rope_tables(positions, rotary_dim, theta)
    half = rotary_dim // 2
    cos_w = np.ones((len(cos), TILE))
    sin_w = np.zeros((len(sin), TILE))
    cos_w[:, :rotary_dim] = cos
    sin_w[:, :half], sin_w[:, half:rotary_dim] = -sin[:, :half], sin[:, half:]
    return cos_w, sin_w


@dataclass
class RopeTables:
    """cos and sin of consecutive positions first_position .. first_position + rows - 1 on the device (fp32
    [rows, rotary_dim], or [rows, 32] signed as sub_tile_tables says for rotary dims below 64), shared by the
    q and k rotations of every attention layer. Made once for every position a model can hold (resident) or
    per chunk; a chunk reads its own rows (apply_rope's position)."""

    cos: DeviceTensor
    sin: DeviceTensor
    rotary_dim: int
    first_position: int = 0

    @classmethod
    def upload(cls, device, positions: np.ndarray, rotary_dim: int, theta: float) -> "RopeTables":
        positions = np.asarray(positions, np.int64).reshape(-1)
        if len(positions) and np.any(np.diff(positions) != 1):
            raise RopeShapeError("RoPE tables hold consecutive positions; pass np.arange(first, end)")
        make = sub_tile_tables if rotary_dim in SUB_TILE_ROTARY_DIMS else rope_tables
        cos, sin = make(positions, rotary_dim, theta)
        return cls(device.upload(cos.astype(np.float32), TABLE_FORMAT),
                   device.upload(sin.astype(np.float32), TABLE_FORMAT), rotary_dim,
                   int(positions[0]) if len(positions) else 0)

    @property
    def end_position(self) -> int:
        """One past the last position the tables hold."""
        return self.first_position + self.cos.shape[0]

    @property
    def nbytes(self) -> int:
        return self.cos.nbytes + self.sin.nbytes

    def free(self) -> None:
        self.cos.device.free(self.cos)
        self.sin.device.free(self.sin)


def apply_rope(device, x: DeviceTensor, tables: RopeTables, *, heads: int, position: int | None = None,
               reports: list | None = None) -> DeviceTensor:
    """Rotate the first rotary_dim dims of every head of x [tokens, heads * head_dim] in place, token i at
    position + i (default: the tables' first position); returns x. The tables must hold those positions, and
    position - tables.first_position must be a multiple of 32 (the kernel reads whole table tiles)."""
    tokens, width = x.shape
    if width % heads:
        raise RopeShapeError(f"x's width {width} is not {heads} heads of equal size")
    position = tables.first_position if position is None else int(position)
    if position < tables.first_position or position + tokens > tables.end_position:
        raise RopeShapeError(f"positions {position}..{position + tokens - 1} are outside the tables' "
                             f"{tables.first_position}..{tables.end_position - 1}; make tables that hold them")
    shape = RopeShape(tokens, heads, width // heads, tables.rotary_dim)
    report = device.run(rope_program(plan_rope(shape), x, tables.cos, tables.sin,
                                     table_row0=position - tables.first_position))
    if reports is not None:
        reports.append(report)
    return x
