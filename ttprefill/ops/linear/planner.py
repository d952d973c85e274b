"""Blocking of a dense projection for tt-metal's 2D-multicast matmul on the 8x8 grid.

The mirrored factory (ops/upstream/matmul_mcast.py) gives each core one output block of
per_core_m x per_core_n tiles that stays in L1 (output and partials CBs) for the whole K loop, with
K blocks of in0_block_w tiles double-buffered for both inputs. A prefill's M (tokens / 32) is far
larger than 8 such blocks fit, so the op runs the program once per row slab of 8 * per_core_m
tiles (the way tt-transformers cuts a long prefill into row chunks): every slab re-reads the whole
weight, so the planner makes slabs as tall as L1 allows.

Choice, in order:
  1. columns: per_core_n = ceil(Nt / 8), spreading N over as many core columns as it has tiles;
  2. K blocks of 4 tiles (else 2, else 1: the first that divides Kt and fits) and the tallest
     per_core_m whose CBs fit the core's L1 with it. Measured on the simulator (timing model 2.1,
     Qwen3.5-9B MLP gate 8192 x 4096 -> 12288, bfp8 weights, cycles per output tile row): K block 4
     with per_core_m 4: 31.3k; K block 2 with 5: 31.6k; K block 1 with 6: 34.9k; K block 4 or 8 with
     2: 36.1-36.7k. Narrow K blocks cost more than the extra weight re-reads of shorter slabs save;
     blocks wider than 4 gain ~1% but take L1 from per_core_m;
  3. per_core_m evened out over that many slabs (the last slab is never a sliver);
  4. the output sub-block: the largest h x w that divides the block and fits half of DST (8 tiles
     with bf16 accumulation, 4 with fp32), wider first (same MLP gate slab, block 8 x 48, timing model
     2.2: 1 x 8 30.6k, 1 x 6 30.7k, 8 x 1 31.7k, 4 x 2 34.1k, 2 x 4 35.4k, 2 x 3 37.2k cycles per tile
     row: a 1-row sub-block streams the weight through srcA behind one reused activation tile, where two
     rows hold both srcB banks and expose each K step's activation unpack; 2.1 had them within 2 %).
The output and partials CBs count once when the factory aliases them (same format: bf16 output with
bf16 accumulation).
"""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.hw import DST_TILES_BF16, DST_TILES_FP32, L1_CB_BUDGET_BYTES, cb_aligned, compute_grid
from ttprefill.ops.upstream.matmul_mcast import INPUT_BUFFERING  # the factory's input double-buffering

from .shapes import LinearShape, LinearShapeError

K_BLOCK_WIDTHS = (4, 2, 1)  # in order of preference (see above)
# The dense op's fidelity when a caller names none: HiFi2, tt-transformers' default for its prefill projections
# with bf16 and bfp8 weights. The engine names one per projection (ops/linear/fidelity.py, ProjectionFidelity).
DEFAULT_FIDELITY = MathFidelity.HiFi2


@dataclass(frozen=True)
class LinearPlan:
    shape: LinearShape
    per_core_m: int
    per_core_n: int
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    slab_tiles: int  # output tile rows per program (8 * per_core_m, or fewer when M is short)
    fidelity: MathFidelity = DEFAULT_FIDELITY

    @property
    def num_slabs(self) -> int:
        return -(-self.shape.mt // self.slab_tiles)

    @property
    def grid_cols(self) -> int:
        return -(-self.shape.nt // self.per_core_n)

    def slabs(self) -> list[tuple[int, int]]:
        """(first tile row, tile rows) of each program."""
        mt = self.shape.mt
        return [(r, min(self.slab_tiles, mt - r)) for r in range(0, mt, self.slab_tiles)]

    def l1_bytes(self) -> int:
        return l1_bytes(self.shape, self.per_core_m, self.per_core_n, self.in0_block_w)

    def describe(self) -> str:
        return (f"{self.num_slabs} slab(s) of {self.slab_tiles} tile rows on {self.grid_cols} x "
                f"{-(-min(self.slab_tiles, self.shape.mt) // self.per_core_m)} cores, block {self.per_core_m} x "
                f"{self.per_core_n}, K block {self.in0_block_w}, sub-block {self.out_subblock_h} x "
                f"{self.out_subblock_w}, {self.fidelity.name}")


def partials_format(shape: LinearShape, num_k_blocks: int) -> DataFormat:
    """The partials CB's format as the factory picks it (packer L1 accumulation past two K blocks)."""
    if num_k_blocks > 2:
        return DataFormat.Float32 if shape.fp32_acc else DataFormat.Float16_b
    return DataFormat.Float32 if shape.fp32_acc else shape.out_format


def l1_bytes(shape: LinearShape, per_core_m: int, per_core_n: int, in0_block_w: int) -> int:
    """L1 the program's CBs take on a core (the mirror's CB list)."""
    blocks = shape.kt // in0_block_w
    depth = INPUT_BUFFERING if blocks > 1 else 1
    out_tiles = per_core_m * per_core_n
    partials = partials_format(shape, blocks)
    # The factory lays the partials over the output in one allocation when their formats agree.
    partials_bytes = 0 if partials == shape.out_format else cb_aligned(partials.tile_bytes * out_tiles)
    return (cb_aligned(DataFormat.Float16_b.tile_bytes * per_core_m * in0_block_w * depth)
            + cb_aligned(shape.weight_format.tile_bytes * per_core_n * in0_block_w * depth)
            + cb_aligned(shape.out_format.tile_bytes * out_tiles) + partials_bytes)


def _subblock(per_core_m: int, per_core_n: int, dst_tiles: int) -> tuple[int, int]:
    options = [(h, w) for h in range(1, dst_tiles + 1) for w in range(1, dst_tiles + 1)
               if h * w <= dst_tiles and per_core_m % h == 0 and per_core_n % w == 0]
    return max(options, key=lambda hw: (hw[0] * hw[1], hw[1]))


def plan_linear(shape: LinearShape, *, grid: tuple[int, int] | None = None,
                l1_budget: int = L1_CB_BUDGET_BYTES,
                fidelity: MathFidelity = DEFAULT_FIDELITY) -> LinearPlan:
    cols_max, rows_max = grid if grid is not None else compute_grid()  # default: the compute grid's
    per_core_n = -(-shape.nt // cols_max)
    rows_needed = -(-shape.mt // rows_max)  # per_core_m that covers M in one slab
    best = None  # (per_core_m, block width)
    for bw in K_BLOCK_WIDTHS:
        if shape.kt % bw:
            continue
        pcm = min(rows_needed, shape.mt)
        while pcm >= 1 and l1_bytes(shape, pcm, per_core_n, bw) > l1_budget:
            pcm -= 1
        if pcm:
            best = (pcm, bw)
            break
    if best is None:
        raise LinearShapeError(
            f"no blocking of {shape} fits a core's L1 ({l1_budget} B): even a 1-tile-row block of "
            f"{per_core_n} output tiles needs {l1_bytes(shape, 1, per_core_n, 1)} B; split the projection's "
            f"output columns into several calls")
    pcm_max, bw = best
    slabs = -(-shape.mt // (rows_max * pcm_max))
    pcm = -(-shape.mt // (slabs * rows_max))  # evened out over the slabs; never above pcm_max
    assert pcm <= pcm_max
    slab_tiles = min(shape.mt, rows_max * pcm)
    dst = DST_TILES_FP32 if shape.fp32_acc else DST_TILES_BF16
    h, w = _subblock(pcm, per_core_n, dst)
    return LinearPlan(shape, pcm, per_core_n, bw, h, w, slab_tiles, fidelity)
