"""The Program of a grouped RMSNorm (kernels/norm/rmsnorm_{reader,compute,writer}.cpp)."""

from __future__ import annotations

from ttprefill.device.formats import fp32_bits
from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    GRID_X,
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
)
from ttprefill.device.tensor import DeviceTensor

from .planner import ACTIVATION_FORMAT, OUT_BUFFERING, WEIGHT_FORMAT, NormPlan
from .shapes import TILE, NormShapeError

KERNELS = KERNELS_DIR / "norm"
# CB indices; the kernels name the same numbers.
CB_X, CB_Z, CB_WEIGHT, CB_ONES, CB_Y, CB_SQ, CB_RS = 0, 1, 2, 3, 16, 24, 25
# The FPU steps (the row-sum matmul, x * rs, x_hat * weight) take TF32 operands from srcA/srcB: HiFi4
# keeps every bit the source registers hold.
FIDELITY = MathFidelity.HiFi4


# Formats a norm may write its output in: bf16, or bfp8 where the output only feeds matmuls over a collective
# (the tensor-parallel gather of the normed rows, EngineOptions.collective_dtype); the packer converts from DST.
OUTPUT_FORMATS = (DataFormat.Float16_b, DataFormat.Bfp8_b)


def check_output(t: DeviceTensor, what: str, shape: tuple[int, int]) -> None:
    if t.shape != shape or t.data_format not in OUTPUT_FORMATS:
        raise NormShapeError(f"{what} must be {list(shape)} in one of {', '.join(f.name for f in OUTPUT_FORMATS)}; "
                             f"got {list(t.shape)} {t.data_format.name}")


def _check(t: DeviceTensor, what: str, shape: tuple[int, int], fmt: DataFormat) -> None:
    if t.shape != shape or t.data_format is not fmt:
        raise NormShapeError(f"{what} must be {list(shape)} {fmt.name}; got {list(t.shape)} {t.data_format.name}")


def norm_program(plan: NormPlan, x: DeviceTensor, weight_rows: DeviceTensor, y: DeviceTensor,
                 z: DeviceTensor | None = None) -> Program:
    s = plan.shape
    x_rows = s.x_tile_row0 * TILE + s.tokens
    if x.shape[-1] != s.x_width or x.shape[0] < x_rows or x.data_format is not ACTIVATION_FORMAT:
        raise NormShapeError(f"x must be [>= {x_rows}, {s.x_width}] {ACTIVATION_FORMAT.name}; got {list(x.shape)} "
                             f"{x.data_format.name}")
    _check(weight_rows, "weight rows", (TILE, s.group_width), WEIGHT_FORMAT)
    check_output(y, "y", (s.tokens, s.out_width))
    if s.gated != (z is not None):
        raise NormShapeError("the gated norm needs z, and only the gated norm takes it")
    if z is not None:
        _check(z, "z", (s.tokens, s.out_width), ACTIVATION_FORMAT)
    zt = z if z is not None else x

    cores = [CoreCoord(i % GRID_X, i // GRID_X) for i in range(plan.num_cores)]
    ranges, first = {}, 0
    for core, n in zip(cores, plan.core_units):
        ranges[core] = (first, n)
        first += n
    all_cores = CoreRangeSet.of(cores)
    g = s.group_tiles
    reader = Kernel(
        KERNELS / "rmsnorm_reader.cpp", Role.RISCV_1, all_cores,
        [int(s.gated), *x.accessor_args(), *zt.accessor_args(), *weight_rows.accessor_args()],
        common_runtime_args=[x.address, zt.address, weight_rows.address, s.groups, g, s.stride // TILE,
                             s.x_col0 // TILE, x.tiles_w, zt.tiles_w, s.x_tile_row0],
        runtime_args={c: [f, n] for c, (f, n) in ranges.items()}, noc=DRAM_READ_NOC)
    compute = Kernel(
        KERNELS / "rmsnorm_compute.cpp", Role.COMPUTE, all_cores, [int(s.gated)],
        common_runtime_args=[g, fp32_bits(1.0 / s.group_width), fp32_bits(s.eps)],
        runtime_args={c: [n] for c, (_, n) in ranges.items()},
        compute_config=ComputeConfig(math_fidelity=FIDELITY, fp32_dest_acc_en=True))
    writer = Kernel(
        KERNELS / "rmsnorm_writer.cpp", Role.RISCV_0, all_cores, y.accessor_args(),
        common_runtime_args=[y.address, s.groups, g],
        runtime_args={c: [f, n] for c, (f, n) in ranges.items()}, noc=DRAM_WRITE_NOC)
    bf16, f32 = DataFormat.Float16_b, DataFormat.Float32
    cbs = [CircularBuffer(CB_X, bf16, bf16.tile_bytes, g * plan.input_buffering, all_cores),
           CircularBuffer(CB_WEIGHT, f32, f32.tile_bytes, g, all_cores),
           CircularBuffer(CB_ONES, bf16, bf16.tile_bytes, 1, all_cores),
           CircularBuffer(CB_Y, y.data_format, y.data_format.tile_bytes, OUT_BUFFERING, all_cores),
           CircularBuffer(CB_SQ, f32, f32.tile_bytes, 1, all_cores),
           CircularBuffer(CB_RS, f32, f32.tile_bytes, 1, all_cores)]
    if s.gated:
        cbs.append(CircularBuffer(CB_Z, bf16, bf16.tile_bytes, g * plan.input_buffering, all_cores))
    kind = "gated_rmsnorm" if s.gated else "rmsnorm"
    inputs = {"x": x, "weight_rows": weight_rows} | ({"z": z} if z is not None else {})
    return Program([reader, compute, writer], cbs, inputs=inputs, outputs={"y": y},
                   name=f"{kind}_T{s.tokens}_{s.groups}x{s.group_width}")
