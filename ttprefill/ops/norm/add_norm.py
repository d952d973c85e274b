"""The residual add and the RMSNorm after it, in one program (kernels/norm/add_rmsnorm_*.cpp):

    x[rows] <- bf16(x[rows] + y)                                   the residual stream, in place
    out     =  x[rows] * rsqrt(mean(x[rows]^2) + eps) * (1 + w)      the next block's normed input

The norm is taken of the stored (bf16-rounded) sum, so the pair computes what residual_add (ops/eltwise)
followed by rms_norm of the result computes, while the sum never goes to DRAM and back between them: per
token tile row, x and y are read once and x and out written once (the two ops read x + y, write x, then
read x again). The weight's row 0 is all the kernel reads of the weight rows (a row broadcast on the FPU),
where rms_norm reads every row of them on every core.

rows: y's rows, at any tile-row offset of x (x_row0), so a scheme that adds and norms a share of the
tokens (e.g. after a reduce-scatter) runs the same op on its slice.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.formats import fp32_bits
from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    CircularBuffer,
    ComputeConfig,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
    split_units,
)
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import DST_TILES_FP32, L1_CB_BUDGET_BYTES, cb_aligned

from .norm import NormWeight
from .planner import ACTIVATION_FORMAT, WEIGHT_FORMAT
from .program import check_output
from .shapes import TILE, NormShapeError

KERNELS = KERNELS_DIR / "norm"
# CB indices; the kernels name the same numbers.
CB_X, CB_Y, CB_WEIGHT, CB_ONES, CB_SUM, CB_OUT, CB_SUM_OUT, CB_SQ, CB_RS = 0, 1, 2, 3, 4, 16, 17, 24, 25
# The FPU products take TF32 operands from srcA/srcB: HiFi4 keeps every bit they hold (as rms_norm).
FIDELITY = MathFidelity.HiFi4
MAX_DST_BATCH = DST_TILES_FP32  # fp32 tiles one DST acquire holds (hw.py)


@dataclass(frozen=True)
class AddNormPlan:
    """tokens rows of width columns; x's rows from tile row x_tile_row0. Units are token tile rows, split
    over the cores in contiguous runs. x and y stream in `chunk` tiles at a time (CBs of two chunks each);
    the sum keeps a whole row of tiles; `batch` tiles go through DST at once."""

    tokens: int
    width: int
    x_tile_row0: int
    eps: float
    batch: int
    chunk: int
    core_units: tuple[tuple[object, int, int], ...]  # (core, first unit, units)

    @property
    def row_tiles(self) -> int:
        return self.width // TILE

    @property
    def units(self) -> int:
        return -(-self.tokens // TILE)


def fixed_l1_bytes(width: int, batch: int) -> int:
    """L1 of everything but the streamed x and y: the weight rows, the kept sum, the two outputs'
    double-buffered batches, the ones, sum-of-squares and rs tiles."""
    w, bf16, f32 = width // TILE, ACTIVATION_FORMAT.tile_bytes, WEIGHT_FORMAT.tile_bytes
    return (cb_aligned(f32 * w) + cb_aligned(bf16 * w) + 2 * cb_aligned(bf16 * 2 * batch) + cb_aligned(bf16)
            + 2 * cb_aligned(DataFormat.Float32.tile_bytes))


def plan_add_norm(tokens: int, width: int, eps: float, *, x_tile_row0: int = 0, max_cores: int | None = None,
                  l1_budget: int = L1_CB_BUDGET_BYTES) -> AddNormPlan:
    if tokens < 1 or width < TILE or width % TILE:
        raise NormShapeError(f"add_rms_norm takes tokens >= 1 and a width that is a positive multiple of {TILE}; "
                             f"got {tokens} x {width}")
    if not eps > 0:
        raise NormShapeError(f"eps must be positive; got {eps}")
    w = width // TILE
    batch = next(b for b in range(MAX_DST_BATCH, 0, -1) if w % b == 0)
    # chunk: a divisor of the row, a whole number of batches, so no push or batch straddles a CB's end
    room = (l1_budget - fixed_l1_bytes(width, batch)) // (2 * 2 * ACTIVATION_FORMAT.tile_bytes)
    chunk = max((d for d in range(batch, w + 1, batch) if w % d == 0 and d <= room), default=None)
    if chunk is None:
        raise NormShapeError(f"a row of {w} tiles needs {fixed_l1_bytes(width, batch)} B of L1 before its inputs "
                             f"stream, more than the {l1_budget} B a core has; use rms_norm after residual_add")
    units = -(-tokens // TILE)
    return AddNormPlan(tokens, width, x_tile_row0, eps, batch, chunk, tuple(split_units(units, max_cores)))


def add_norm_program(plan: AddNormPlan, x: DeviceTensor, y: DeviceTensor, weight_rows: DeviceTensor,
                     out: DeviceTensor) -> Program:
    p = plan
    x_rows = p.x_tile_row0 * TILE + p.tokens
    # y (a reduction's output) and out (the normed rows a gather may carry) in bf16 or bfp8: the unpacker and
    # packer convert, the kernels take each CB's tile size
    check_output(y, "y", (p.tokens, p.width))
    check_output(out, "out", (p.tokens, p.width))
    if x.shape[-1] != p.width or x.shape[0] < x_rows or x.data_format is not ACTIVATION_FORMAT:
        raise NormShapeError(f"x must be [>= {x_rows}, {p.width}] {ACTIVATION_FORMAT.name}; got {list(x.shape)} "
                             f"{x.data_format.name}")
    if p.tokens % TILE and x.shape[0] != x_rows:
        raise NormShapeError(f"{p.tokens} rows end inside a tile row that x's rows {x_rows}.. share: the kernel "
                             f"writes whole tiles; add a multiple of {TILE} rows, or rows that end where x does")
    if weight_rows.shape != (TILE, p.width) or weight_rows.data_format is not WEIGHT_FORMAT:
        raise NormShapeError(f"weight rows must be [{TILE}, {p.width}] {WEIGHT_FORMAT.name}; got "
                             f"{list(weight_rows.shape)} {weight_rows.data_format.name}")
    if out.address == x.address or out.address == y.address:
        raise NormShapeError("out must be its own tensor: x takes the sum in place, y is read alongside it")

    cores = CoreRangeSet.of([c for c, _, _ in p.core_units])
    w = p.row_tiles
    reader = Kernel(
        KERNELS / "add_rmsnorm_reader.cpp", Role.RISCV_1, cores,
        [*x.accessor_args(), *y.accessor_args(), *weight_rows.accessor_args()],
        common_runtime_args=[x.address, y.address, weight_rows.address, w, p.x_tile_row0, p.chunk],
        runtime_args={c: [first, n] for c, first, n in p.core_units}, noc=DRAM_READ_NOC)
    compute = Kernel(
        KERNELS / "add_rmsnorm_compute.cpp", Role.COMPUTE, cores, [p.batch],
        common_runtime_args=[w, fp32_bits(1.0 / p.width), fp32_bits(p.eps)],
        runtime_args={c: [n] for c, _, n in p.core_units},
        compute_config=ComputeConfig(math_fidelity=FIDELITY, fp32_dest_acc_en=True))
    writer = Kernel(
        KERNELS / "add_rmsnorm_writer.cpp", Role.RISCV_0, cores,
        [p.batch, *x.accessor_args(), *out.accessor_args()],
        common_runtime_args=[x.address, out.address, w, p.x_tile_row0],
        runtime_args={c: [first, n] for c, first, n in p.core_units}, noc=DRAM_WRITE_NOC)
    bf16, f32 = ACTIVATION_FORMAT, DataFormat.Float32
    cbs = [CircularBuffer(CB_X, bf16, bf16.tile_bytes, 2 * p.chunk, cores),
           CircularBuffer(CB_Y, y.data_format, y.data_format.tile_bytes, 2 * p.chunk, cores),
           CircularBuffer(CB_WEIGHT, WEIGHT_FORMAT, WEIGHT_FORMAT.tile_bytes, w, cores),
           CircularBuffer(CB_ONES, bf16, bf16.tile_bytes, 1, cores),
           CircularBuffer(CB_SUM, bf16, bf16.tile_bytes, w, cores),
           CircularBuffer(CB_OUT, out.data_format, out.data_format.tile_bytes, 2 * p.batch, cores),
           CircularBuffer(CB_SUM_OUT, bf16, bf16.tile_bytes, 2 * p.batch, cores),
           CircularBuffer(CB_SQ, f32, f32.tile_bytes, 1, cores),
           CircularBuffer(CB_RS, f32, f32.tile_bytes, 1, cores)]
    return Program([reader, compute, writer], cbs, inputs={"x": x, "y": y, "weight_rows": weight_rows},
                   outputs={"x": x, "out": out}, name=f"add_rmsnorm_T{p.tokens}_{p.width}")


def add_rms_norm(device, x: DeviceTensor, y: DeviceTensor, weight: NormWeight, eps: float, *,
                 out: DeviceTensor | None = None, x_row0: int = 0, reports: list | None = None) -> DeviceTensor:
    """x[x_row0 : x_row0 + rows] += y (bf16, in place) and returns out = zero-centred RMSNorm of those rows
    of the new x times (1 + w), [rows, width] (y is [rows, width]). x_row0: a multiple of 32."""
    if not weight.zero_centred:
        raise NormShapeError("add_rms_norm is the decoder norm: upload its weight with NormWeight.upload(w) (1 + w)")
    if x_row0 % TILE or x_row0 < 0:
        raise NormShapeError(f"x_row0 = {x_row0} must be a non-negative multiple of {TILE} (whole tile rows)")
    tokens, width = y.shape
    if weight.width != width:
        raise NormShapeError(f"the weight has {weight.width} entries; the rows are {width} wide")
    plan = plan_add_norm(tokens, width, eps, x_tile_row0=x_row0 // TILE)
    own = out is None
    if own:
        out = device.allocate((tokens, width), ACTIVATION_FORMAT)
    try:
        report = device.run(add_norm_program(plan, x, y, weight.rows, out))
    except Exception:
        if own:
            device.free(out)
        raise
    if reports is not None:
        reports.append(report)
    return out
