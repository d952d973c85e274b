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
     2: 36.1-36.7k. Narrow K blocks cost more than the extra weight re-reads of shorter slabs save.
     Then K blocks of 8 instead of 4 where they divide Kt and fit without one more slab: each K block
     costs the same handshakes (CB waits and pops, the partials' pack and release, the multicasts'
     semaphores) whatever its width, so a wider block halves them (timing model 2.4, central, bfp8
     weights, one slab: T 2048 K 6144 N 4096 (bfp8 out) 826k -> 805k LoFi, 1015k -> 989k HiFi2;
     4096^3 1139k -> 1116k LoFi, 1522k -> 1486k HiFi2; T 2048 K 2048 N 4096 329k -> 315k LoFi);
  3. per_core_m evened out over that many slabs (the last slab is never a sliver);
  4. the output sub-block of fewest modeled cycles per tile product (subblock_product_cycles: tt-llk's
     matmul unpack as the timing model runs it) among those that divide the block and fit half of DST
     (8 tiles with bf16 accumulation, 4 with fp32); the larger, then the wider among equals. A one-row
     (or one-column) sub-block reuses one tile of the operand along its short side and streams the
     other, so each product unpacks one streamed tile plus a share of the reused one: the unpacker
     sets the pace whenever that takes longer than the product's math (LoFi: 16 cycles, while a bfp8
     tile takes 17 to unpack and 2 to address). A two-row (or two-column) sub-block halves the streamed
     tiles but holds both banks of the reused operand until its last product, so every K step waits for
     its reused tiles and first streamed one: it wins only where the one-row forms are unpack-bound by
     more than that (a bf16 x at per_core_n 20, LoFi).
     So, timing model 2.4, central, bfp8 weights, K blocks of 8, T 2048 K 4096 N 5120 (per_core_n 20):
     a bfp8 x (the gathered rows on a mesh) 8 x 1, 689k cycles with the former 2 x 4 -> 665k LoFi,
     985k -> 932k HiFi2; a bf16 x 4 x 2 at LoFi (725k; 1 x 5 759k, 2 x 4 761k) and 1 x 5 at HiFi2 (940k;
     2 x 4 1057k). 1 x 8 wherever per_core_n allows it with a bf16 x, 1 x 4 with fp32 DST. The estimate
     ranks within ~3 %: the 27B T3000 chip's SwiGLU (per_core_n 18) takes 1 x 6 (26.0 against 4 x 2's
     26.4 a product) where 4 x 2 measures 1.2 % faster at LoFi (744k against 754k; at HiFi2 1 x 6 997k
     against 1100k).
The output and partials CBs count once when the factory aliases them (same format: bf16 output with
bf16 accumulation).
"""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.hw import (
    DST_TILES_BF16,
    DST_TILES_FP32,
    L1_CB_BUDGET_BYTES,
    UNPACK_BYTES_PER_CYCLE,
    UNPACR_SETUP_CYCLES,
    cb_aligned,
    compute_grid,
)
from ttprefill.ops.upstream.matmul_mcast import INPUT_BUFFERING  # the factory's input double-buffering

from .shapes import LinearShape, LinearShapeError

K_BLOCK_WIDTHS = (4, 2, 1)  # in order of preference (see above)
WIDE_K_BLOCK = 8  # taken instead of 4 where it costs no slab (see above)
# Ranking estimates for subblock_product_cycles, the timing model's central costs (docs/TIMING.md "Cost
# settings"): the fixed cycles of an LLK call (range 2-20) and a tile matmul's overhead in a running loop
# (8-15 %). MATMUL_TILE_CYCLES_PER_PHASE: 16 a fidelity phase (tech_reports/matrix_engine, timing.h).
LLK_CALL_CYCLES = 8
MATMUL_LOOP_OVERHEAD = 0.10
MATMUL_TILE_CYCLES_PER_PHASE = 16
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


def subblock_product_cycles(shape: LinearShape, h: int, w: int, fidelity: MathFidelity) -> float:
    """Estimated cycles per tile product of an h x w sub-block's K steps (one matmul_block call each), as the
    timing model runs tt-llk's matmul (docs/TIMING.md "Matmul"): the operand along the short side is reused
    (in0 in srcB when w >= h), its min(h, w) tiles two at a time, and each streamed tile of the other serves
    those (up to two) products; both unpackers share UNPACK_BYTES_PER_CYCLE and every tile costs an UNPACR
    set-up. One reused tile is released when the call's math starts, so unpack and math overlap and the
    slower sets the pace; two hold both banks until the last product, so the next call's reused tiles and
    first streamed tile are unpacked while the FPU waits."""
    reuse_in0 = w >= h
    t, n = min(h, w), max(h, w)
    streamed = n * -(-t // 2)
    in0_bytes, in1_bytes = shape.in0_format.tile_bytes, shape.weight_format.tile_bytes
    reused_bytes, streamed_bytes = (in0_bytes, in1_bytes) if reuse_in0 else (in1_bytes, in0_bytes)
    per_byte = 1.0 / UNPACK_BYTES_PER_CYCLE
    u_reused = t * (reused_bytes * per_byte + UNPACR_SETUP_CYCLES)
    u_streamed = streamed_bytes * per_byte + UNPACR_SETUP_CYCLES
    unpack = LLK_CALL_CYCLES + u_reused + streamed * u_streamed
    product = MATMUL_TILE_CYCLES_PER_PHASE * fidelity.phases * (1 + MATMUL_LOOP_OVERHEAD)
    math = h * w * product + LLK_CALL_CYCLES
    if t == 1:
        call = max(math, unpack)
    else:  # the call's math, or its streamed tiles' arrival and last two products; then the exposed refill
        uses = 2
        call = max(math, (streamed - 1) * u_streamed + uses * product) + \
            max(0.0, LLK_CALL_CYCLES + u_reused + u_streamed - product)
    return call / (h * w)


def choose_subblock(shape: LinearShape, per_core_m: int, per_core_n: int, fidelity: MathFidelity,
                    widths=None) -> tuple[int, int]:
    """The (h, w) of fewest subblock_product_cycles dividing the per-core block and fitting half of DST (the
    larger, then the wider among equals). widths: the allowed widths (default: any)."""
    dst = DST_TILES_FP32 if shape.fp32_acc else DST_TILES_BF16
    options = [(h, w) for h in range(1, dst + 1) for w in range(1, dst + 1)
               if h * w <= dst and per_core_m % h == 0 and per_core_n % w == 0 and (widths is None or w in widths)]
    return min(options, key=lambda hw: (round(subblock_product_cycles(shape, *hw, fidelity), 6), -hw[0] * hw[1],
                                        -hw[1]))


def k_block_and_rows(shape: LinearShape, rows_max: int, fits) -> tuple[int, int] | None:
    """(in0_block_w, tallest per_core_m) by the rule above; fits(per_core_m, block width) says whether the
    CBs fit L1. None when nothing fits."""
    def tallest(bw):
        pcm = min(-(-shape.mt // rows_max), shape.mt)
        while pcm >= 1 and not fits(pcm, bw):
            pcm -= 1
        return pcm

    for bw in K_BLOCK_WIDTHS:
        if shape.kt % bw:
            continue
        pcm = tallest(bw)
        if pcm:
            break
    else:
        return None
    if bw == K_BLOCK_WIDTHS[0] and shape.kt % WIDE_K_BLOCK == 0:
        wide_pcm = tallest(WIDE_K_BLOCK)
        if wide_pcm and -(-shape.mt // (rows_max * wide_pcm)) == -(-shape.mt // (rows_max * pcm)):
            return WIDE_K_BLOCK, wide_pcm
    return bw, pcm


def plan_linear(shape: LinearShape, *, grid: tuple[int, int] | None = None,
                l1_budget: int = L1_CB_BUDGET_BYTES,
                fidelity: MathFidelity = DEFAULT_FIDELITY) -> LinearPlan:
    cols_max, rows_max = grid if grid is not None else compute_grid()  # default: the compute grid's
    per_core_n = -(-shape.nt // cols_max)
    best = k_block_and_rows(shape, rows_max, lambda pcm, bw: l1_bytes(shape, pcm, per_core_n, bw) <= l1_budget)
    if best is None:
        raise LinearShapeError(
            f"no blocking of {shape} fits a core's L1 ({l1_budget} B): even a 1-tile-row block of "
            f"{per_core_n} output tiles needs {l1_bytes(shape, 1, per_core_n, 1)} B; split the projection's "
            f"output columns into several calls")
    bw, pcm_max = best
    slabs = -(-shape.mt // (rows_max * pcm_max))
    pcm = -(-shape.mt // (slabs * rows_max))  # evened out over the slabs; never above pcm_max
    assert pcm <= pcm_max
    slab_tiles = min(shape.mt, rows_max * pcm)
    h, w = choose_subblock(shape, pcm, per_core_n, fidelity)
    return LinearPlan(shape, pcm, per_core_n, bw, h, w, slab_tiles, fidelity)
