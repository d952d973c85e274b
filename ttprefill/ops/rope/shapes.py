"""The shape of a partial RoPE."""

from __future__ import annotations

from dataclasses import dataclass

TILE = 32


class RopeShapeError(ValueError):
    """A RoPE the kernels cannot run as asked; the message names the argument and the fix."""


@dataclass(frozen=True)
class RopeShape:
    """x [tokens, heads * head_dim], rotated in place on each head's first rotary_dim columns."""

    tokens: int
    heads: int
    head_dim: int
    rotary_dim: int

    def __post_init__(self):
        if self.tokens < 1 or self.heads < 1:
            raise RopeShapeError(f"tokens and heads must be positive; got {self.tokens}, {self.heads}")
        if self.head_dim % TILE:
            raise RopeShapeError(f"head_dim {self.head_dim} must be a multiple of {TILE}")
        if self.rotary_dim % (2 * TILE) or not 0 < self.rotary_dim <= self.head_dim:
            raise RopeShapeError(
                f"rotary_dim {self.rotary_dim} must be a positive multiple of {2 * TILE} (rotate_half's halves are "
                f"whole tiles) and at most head_dim {self.head_dim}; smaller rotary dims (e.g. the tiny test "
                f"model's 16) stay on the host")

    @property
    def head_tiles(self) -> int:
        return self.head_dim // TILE

    @property
    def rotary_tiles(self) -> int:
        return self.rotary_dim // TILE

    @property
    def token_tiles(self) -> int:
        return -(-self.tokens // TILE)

    @property
    def units(self) -> int:
        return self.token_tiles * self.heads
