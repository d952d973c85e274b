"""The matmul blocking of ttnn's fused matmul + collective ops (device/fused_ccl.py), chosen here because it is
a planner's choice (K block widths, DST sub-blocks), which the device layer does not make.

The fused op's matmul runs as a 2D-multicast program on the grid its collective leaves it
(mesh_timing.fused_matmul_grid): each core a per_core_m x per_core_n block of output tiles, computed out_block_h
tile rows at a time (at most 8, to leave L1 for the inputs), K in blocks of the widest of K_BLOCK_WIDTHS that
divides the width the matmul consumes at once (a gathered slice's width for the fused gather, K otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.mesh_timing import fused_matmul_grid
from ttprefill.hw import ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR

from ttprefill.hw import DST_TILES_BF16

from .planner import K_BLOCK_WIDTHS
from .shapes import TILE

# A choice, not a hardware limit: output blocks of at most 8 tile rows keep the matmul's input CBs in L1 at
# the fused op's widths (checked only on the mock, which lays out CBs but runs nothing; an estimate, 4-8).
MAX_OUT_BLOCK_TILE_ROWS = 8


@dataclass(frozen=True)
class MatmulBlocking:
    """What ttnn's MatmulMultiCoreReuseMultiCastProgramConfig needs, as plain integers; grid is (columns, rows)."""

    grid: tuple[int, int]
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    out_block_h: int
    per_core_m: int
    per_core_n: int


def matmul_blocking(m: int, k_block_tiles: int, n: int, grid: tuple[int, int]) -> MatmulBlocking:
    """[m, *] @ [*, n] on `grid`, consuming K `k_block_tiles` tiles at a time."""
    cols, rows = grid
    per_core_m, per_core_n = -(-(-(-m // TILE)) // rows), -(-(-(-n // TILE)) // cols)
    out_block_h = max(h for h in range(1, min(MAX_OUT_BLOCK_TILE_ROWS, per_core_m) + 1) if per_core_m % h == 0)
    in0_block_w = next(b for b in K_BLOCK_WIDTHS if k_block_tiles % b == 0)
    sub_h, sub_w = max(((h, w) for h in range(1, DST_TILES_BF16 + 1) for w in range(1, DST_TILES_BF16 + 1)
                        if h * w <= DST_TILES_BF16 and out_block_h % h == 0 and per_core_n % w == 0),
                       key=lambda hw: (hw[0] * hw[1], hw[1]))
    return MatmulBlocking(grid, in0_block_w, sub_h, sub_w, out_block_h, per_core_m, per_core_n)


def all_gather_matmul_blocking(device_grid: tuple[int, int], m: int, k_shard: int, n: int,
                               links: int = ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR) -> MatmulBlocking:
    """The fused gather's matmul: it consumes one chip's gathered slice (k_shard columns) at a time."""
    return matmul_blocking(m, -(-k_shard // TILE), n, fused_matmul_grid(links, device_grid))


def matmul_reduce_scatter_blocking(device_grid: tuple[int, int], m: int, k: int, n: int, batches: int = 1,
                                   links: int = ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR) -> MatmulBlocking:
    """The fused reduce-scatter's matmul: one batch of m / batches rows at a time, the whole K."""
    return matmul_blocking(m // max(1, batches), -(-k // TILE), n, fused_matmul_grid(links, device_grid))
