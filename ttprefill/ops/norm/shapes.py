"""The shape of a grouped RMSNorm."""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.hw import TILE


class NormShapeError(ValueError):
    """A norm the kernels cannot run as asked; the message names the argument and the fix."""


@dataclass(frozen=True)
class NormShape:
    """y [tokens, groups * group_width] = norm of each group of x's rows x_tile_row0 * 32 ..
    x_tile_row0 * 32 + tokens (x [>= those rows, x_width]).

    Group g of a row starts at column x_col0 + g * group_stride of x; z (gated) is
    [tokens, groups * group_width] with the groups back to back. x_tile_row0 > 0 norms a later slice
    of x, e.g. the tile row holding the last token before the LM head."""

    tokens: int
    x_width: int
    group_width: int
    groups: int = 1
    group_stride: int | None = None  # columns; None = group_width (back to back)
    x_col0: int = 0
    gated: bool = False
    eps: float = 1e-6
    x_tile_row0: int = 0

    def __post_init__(self):
        if self.tokens < 1 or self.groups < 1:
            raise NormShapeError(f"tokens and groups must be positive; got {self.tokens}, {self.groups}")
        for name in ("x_width", "group_width", "x_col0", "stride"):
            value = self.stride if name == "stride" else getattr(self, name)
            if value % TILE:
                raise NormShapeError(f"{name} = {value} must be a multiple of {TILE} (the kernels move whole tiles)")
        if self.group_width < TILE:
            raise NormShapeError(f"group_width must be at least {TILE}; got {self.group_width}")
        if self.stride < self.group_width:
            raise NormShapeError(f"groups overlap: group_stride {self.stride} < group_width {self.group_width}")
        end = self.x_col0 + (self.groups - 1) * self.stride + self.group_width
        if end > self.x_width:
            raise NormShapeError(f"the last group ends at column {end}, past x's width {self.x_width}")
        if self.x_tile_row0 < 0 or (self.x_tile_row0 and self.gated):
            raise NormShapeError(f"x_tile_row0 {self.x_tile_row0}: a non-negative tile row, zero-centred norms only")
        if not self.eps > 0:
            raise NormShapeError(f"eps must be positive; got {self.eps}")

    @property
    def stride(self) -> int:
        return self.group_width if self.group_stride is None else self.group_stride

    @property
    def group_tiles(self) -> int:
        return self.group_width // TILE

    @property
    def token_tiles(self) -> int:
        return -(-self.tokens // TILE)

    @property
    def units(self) -> int:
        return self.token_tiles * self.groups

    @property
    def out_width(self) -> int:
        return self.groups * self.group_width
