"""The MLP's gate and up projections and their SwiGLU as one program a row slab: out = silu(x Wg^T) * (x Wu^T).

One resident weight holds both projections, their tile columns alternating (pair_gate_up: gate tile column c,
then up tile column c), so every output block of the 2D-multicast matmul holds each gate tile beside its up
tile. Our compute kernel (kernels/linear/swiglu_matmul_compute.cpp) runs the matmul's K loop as tt-metal's
does, then on the last K block applies silu to each gate tile in DST, multiplies it by its up tile and packs
only the products: x is read once for both projections, and only [T, I] is written (no [T, 2 I] round trip
through DRAM and no separate element-wise pass). The dataflow kernels are tt-metal's own, through the
factory mirror's `out_pairs` variant (ops/upstream/matmul_mcast.py).

Blocking (plan_swiglu_group) follows the dense planner (planner.py) with two constraints: a core's block holds
whole pairs (per_core_n even, the output's ceil(pairs / 8) a core column), and so does a sub-block (its width
even); the L1 is the dense op's for the weight's columns (the partials fill the in1-wide block; the narrower
output lies in them when the formats agree). A wide weight leaves room for short blocks only, and every row slab
re-reads the weight: plan_swiglu may cut the columns into groups, one program per group and slab, each reading
a column range of the one resident weight and writing its range of the output, taking the number of groups that
reads the fewest DRAM bytes (each slab its weight columns, each group all of x). At 9B on one chip (I 12288,
2048 tokens) that is two groups of the n300 chip's shape instead of four slabs re-reading the whole weight.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.program import DataFormat, MathFidelity, Role
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import DST_TILES_BF16, DST_TILES_FP32, L1_CB_BUDGET_BYTES, cb_aligned, compute_grid
from ttprefill.ops.upstream.matmul_mcast import INPUT_BUFFERING

from .linear import DenseWeight
from .program import linear_programs
from .planner import DEFAULT_FIDELITY, LinearPlan, choose_subblock, k_block_and_rows, partials_format
from .shapes import ACTIVATION_FORMATS, TILE, LinearShape, LinearShapeError

COMPUTE_KERNEL = KERNELS_DIR / "linear" / "swiglu_matmul_compute.cpp"


def pair_gate_up(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """gate_proj and up_proj [I, k_in] (the checkpoint's layout) -> the paired weight [2 I', k_in], I' = I
    rounded up to whole tiles: 32 rows of gate, the same 32 rows of up, and so on (pad rows zero)."""
    gate, up = np.asarray(gate, np.float32), np.asarray(up, np.float32)
    if gate.ndim != 2 or gate.shape != up.shape:
        raise LinearShapeError(f"gate_proj and up_proj must be [I, k_in] of one shape; got {gate.shape} and {up.shape}")
    i, k = gate.shape
    tiles = -(-i // TILE)
    pad = ((0, tiles * TILE - i), (0, 0))
    g = np.pad(gate, pad).reshape(tiles, 1, TILE, k)
    u = np.pad(up, pad).reshape(tiles, 1, TILE, k)
    return np.concatenate([g, u], axis=1).reshape(2 * tiles * TILE, k)


def paired_width(intermediate: int) -> int:
    """Output columns of the paired weight for an MLP of `intermediate` columns (gate and up, whole tiles)."""
    return 2 * -(-intermediate // TILE) * TILE


def _l1_bytes(shape: LinearShape, per_core_m: int, per_core_n: int, in0_block_w: int) -> int:
    """L1 of the program's CBs on a core: the dense op's, except that an output CB of its own (partials in
    another format) holds half the in1-wide block."""
    blocks = shape.kt // in0_block_w
    depth = INPUT_BUFFERING if blocks > 1 else 1
    block_tiles = per_core_m * per_core_n
    partials = partials_format(shape, blocks)
    if partials == shape.out_format:
        out_bytes = cb_aligned(shape.out_format.tile_bytes * block_tiles)  # the partials' allocation
    else:
        out_bytes = cb_aligned(shape.out_format.tile_bytes * block_tiles // 2) + \
            cb_aligned(partials.tile_bytes * block_tiles)
    return (cb_aligned(DataFormat.Float16_b.tile_bytes * per_core_m * in0_block_w * depth)
            + cb_aligned(shape.weight_format.tile_bytes * per_core_n * in0_block_w * depth) + out_bytes)


@dataclass(frozen=True)
class SwigluPlan:
    """The paired projection's programs: column groups, each (first tile column of the paired weight, the
    blocking of that many columns: its plan.shape.n_out)."""

    groups: tuple[tuple[int, LinearPlan], ...]

    def dram_read_bytes(self) -> int:
        """What its programs read: every slab its group's weight columns and its rows of x."""
        return sum(p.num_slabs * p.shape.kt * p.shape.nt * p.shape.weight_format.tile_bytes
                   + p.shape.mt * p.shape.kt * DataFormat.Float16_b.tile_bytes for _, p in self.groups)

    def describe(self) -> str:
        return "; ".join(f"columns {c0}+{p.shape.nt} (tiles): {p.describe()}" for c0, p in self.groups)


def plan_swiglu(shape: LinearShape, *, grid: tuple[int, int] | None = None, l1_budget: int = L1_CB_BUDGET_BYTES,
                fidelity: MathFidelity = DEFAULT_FIDELITY) -> SwigluPlan:
    """The paired projection (shape.n_out: the paired weight's width, paired_width) in the column groups that
    read the fewest DRAM bytes (the fewest groups among equals), each group's pairs as even as they divide."""
    if shape.nt % 2:
        raise LinearShapeError(f"the paired gate | up weight has whole tile pairs; got {shape.n_out} columns")
    pairs = shape.nt // 2
    best = None
    for count in range(1, pairs + 1):
        sizes = [pairs // count + (g < pairs % count) for g in range(count)]
        groups, c0 = [], 0
        for n in sizes:
            groups.append((2 * c0, plan_swiglu_group(replace(shape, n_out=2 * n * TILE), grid=grid,
                                                     l1_budget=l1_budget, fidelity=fidelity)))
            c0 += n
        plan = SwigluPlan(tuple(groups))
        if best is None or plan.dram_read_bytes() < best.dram_read_bytes():
            best = plan
    return best


def plan_swiglu_group(shape: LinearShape, *, grid: tuple[int, int] | None = None,
                      l1_budget: int = L1_CB_BUDGET_BYTES, fidelity: MathFidelity = DEFAULT_FIDELITY) -> LinearPlan:
    """Blocking of one program's columns of the paired projection (shape.n_out of them, whole pairs)."""
    if shape.nt % 2:
        raise LinearShapeError(f"the paired gate | up weight has whole tile pairs; got {shape.n_out} columns")
    cols_max, rows_max = grid if grid is not None else compute_grid()
    per_core_n = 2 * -(-(shape.nt // 2) // cols_max)
    best = k_block_and_rows(shape, rows_max, lambda pcm, bw: _l1_bytes(shape, pcm, per_core_n, bw) <= l1_budget)
    if best is None:
        raise LinearShapeError(f"no blocking of the paired projection {shape} fits a core's L1 ({l1_budget} B); "
                               "split the MLP's columns over more chips or calls")
    bw, pcm_max = best
    slabs = -(-shape.mt // (rows_max * pcm_max))
    pcm = -(-shape.mt // (slabs * rows_max))
    # whole pairs a sub-block, by the dense planner's cost model (one tile row streams the weight)
    dst = DST_TILES_FP32 if shape.fp32_acc else DST_TILES_BF16
    h, w = choose_subblock(shape, pcm, per_core_n, fidelity, widths=range(2, dst + 1, 2))
    return LinearPlan(shape, pcm, per_core_n, bw, h, w, min(shape.mt, rows_max * pcm), fidelity)


def swiglu_programs(device, x: DeviceTensor, w: DeviceTensor, out: DeviceTensor, plan: SwigluPlan):
    """One program a column group and row slab: the dense op's slab programs (program.py) in the out_pairs
    variant over the group's columns, with our compute kernel in place of tt-metal's."""
    programs = []
    for c0, group in plan.groups:
        for program in linear_programs(device, x, w, out, group, out_pairs=True, columns=(c0, group.shape.nt)):
            program.kernels = [replace(k, source=COMPUTE_KERNEL) if k.role is Role.COMPUTE else k
                               for k in program.kernels]
            program.name = program.name.replace("linear_", f"swiglu_cols{c0}+{group.shape.nt}_", 1)
            programs.append(program)
    return programs


def linear_swiglu(device, x: DeviceTensor, weight: DenseWeight, out: DeviceTensor | None = None, *,
                  fidelity: MathFidelity = DEFAULT_FIDELITY, plan: SwigluPlan | None = None,
                  reports: list | None = None) -> DeviceTensor:
    """out [tokens, I] = silu(x Wg^T) * (x Wu^T) with weight the resident pair_gate_up weight ([k_in, 2 I']).
    plan: a plan_swiglu blocking (default: the planner's for this shape, at `fidelity`)."""
    if len(x.shape) != 2 or x.shape[-1] != weight.k_in:
        raise LinearShapeError(f"x must be [tokens, {weight.k_in}] for this weight; got {x.shape}")
    if x.data_format not in ACTIVATION_FORMATS:  # bfp8: the normed rows a bfp8 gather carries (collective_dtype)
        raise LinearShapeError(f"x must be activations in one of {', '.join(f.name for f in ACTIVATION_FORMATS)}; "
                               f"got {x.data_format.name}")
    if plan is None:
        plan = plan_swiglu(LinearShape(x.shape[0], weight.k_in, weight.n_out, weight.data_format,
                                       in0_format=x.data_format), fidelity=fidelity)
    else:
        end = 0  # the groups must cover the weight's tile columns once, in order
        for c0, group in sorted(plan.groups):
            same = (group.shape.tokens, group.shape.k_in) == (x.shape[0], weight.k_in)
            end = end + group.shape.nt if c0 == end and same else -1
        if end != weight.n_out // TILE:
            raise LinearShapeError(f"the plan ({plan.describe()}) does not cover x {x.shape} times the "
                                   f"[{weight.k_in}, {weight.n_out}] weight's columns once")
    if out is None:
        out = device.allocate((x.shape[0], weight.n_out // 2), DataFormat.Float16_b)
    if out.shape[0] != x.shape[0] or paired_width(out.shape[1]) != weight.n_out or \
            out.data_format is not DataFormat.Float16_b:
        raise LinearShapeError(f"out must be bf16 [{x.shape[0]}, I] with 2 I rounded to tiles = {weight.n_out}; "
                               f"got {out.shape} {out.data_format.name}")
    for program in swiglu_programs(device, x, weight.tensor, out, plan):
        report = device.run(program)
        if reports is not None:
            reports.append(report)
    return out
