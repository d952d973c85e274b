"""Host side of RoPE: the cos/sin tables of a chunk's positions and the op on a DeviceTensor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ttprefill.device.tensor import DeviceTensor

from .planner import plan_rope
from .program import TABLE_FORMAT, rope_program
from .shapes import RopeShape, RopeShapeError


def rope_tables(positions: np.ndarray, rotary_dim: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin [T, rotary_dim] for rotate_half RoPE: angle(p, i) = p * theta^(-2 (i mod r/2) / r), in fp64."""
    if rotary_dim % 2:
        raise RopeShapeError(f"rotary_dim must be even; got {rotary_dim}")
    half = rotary_dim // 2
    inv_freq = theta ** (-np.arange(half, dtype=np.float64) * 2.0 / rotary_dim)
    angles = np.asarray(positions, np.float64)[:, None] * inv_freq[None, :]
    angles = np.concatenate([angles, angles], axis=1)
    return np.cos(angles), np.sin(angles)


@dataclass
class RopeTables:
    """cos and sin of one chunk's positions on the device (fp32 [T, rotary_dim]): uploaded once per chunk
    and shared by the q and k rotations of every attention layer."""

    cos: DeviceTensor
    sin: DeviceTensor
    rotary_dim: int

    @classmethod
    def upload(cls, device, positions: np.ndarray, rotary_dim: int, theta: float) -> "RopeTables":
        cos, sin = rope_tables(positions, rotary_dim, theta)
        return cls(device.upload(cos.astype(np.float32), TABLE_FORMAT),
                   device.upload(sin.astype(np.float32), TABLE_FORMAT), rotary_dim)

    def free(self) -> None:
        self.cos.device.free(self.cos)
        self.sin.device.free(self.sin)


def apply_rope(device, x: DeviceTensor, tables: RopeTables, *, heads: int, reports: list | None = None) -> DeviceTensor:
    """Rotate the first rotary_dim dims of every head of x [tokens, heads * head_dim] in place; returns x."""
    tokens, width = x.shape
    if width % heads:
        raise RopeShapeError(f"x's width {width} is not {heads} heads of equal size")
    shape = RopeShape(tokens, heads, width // heads, tables.rotary_dim)
    report = device.run(rope_program(plan_rope(shape), x, tables.cos, tables.sin))
    if reports is not None:
        reports.append(report)
    return x
