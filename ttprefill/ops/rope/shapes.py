"""The shape of a partial RoPE."""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.hw import TILE

# Rotary widths below a tile pair: the rotation stays inside the head's first tile, its halves swapped by
# the reader in 16-byte pieces (8 bf16 values), so half the width must be 8 or 16 values.
SUB_TILE_ROTARY_DIMS = (16, 32)


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
        whole_tiles = self.rotary_dim % (2 * TILE) == 0
        if not (whole_tiles or self.rotary_dim in SUB_TILE_ROTARY_DIMS) or not 0 < self.rotary_dim <= self.head_dim:
            raise RopeShapeError(
                f"rotary_dim {self.rotary_dim} must be a positive multiple of {2 * TILE} (rotate_half's halves are "
                f"whole tiles) or one of {SUB_TILE_ROTARY_DIMS} (inside the first tile), and at most head_dim "
                f"{self.head_dim}")

    @property
    def sub_tile(self) -> bool:
        """The rotation lies inside each head's first tile (rotary_dim 16 or 32)."""
        return self.rotary_dim < 2 * TILE

    @property
    def table_width(self) -> int:
        """Columns of the cos/sin tables: the rotary dims, or one whole tile for a sub-tile rotation."""
        return TILE if self.sub_tile else self.rotary_dim

    @property
    def head_tiles(self) -> int:
        return self.head_dim // TILE

    @property
    def rotary_tiles(self) -> int:
        return 1 if self.sub_tile else self.rotary_dim // TILE

    @property
    def token_tiles(self) -> int:
        return -(-self.tokens // TILE)

    @property
    def units(self) -> int:
        return self.token_tiles * self.heads
