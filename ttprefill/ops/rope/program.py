"""The Program of a partial RoPE in place (kernels/rope/rope_{reader,compute,writer}.cpp)."""

from __future__ import annotations

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

from .planner import INPUT_BUFFERING, OUT_BUFFERING, RopePlan
from .shapes import TILE, RopeShapeError

KERNELS = KERNELS_DIR / "rope"
CB_X, CB_COS, CB_SIN, CB_SWAP, CB_Y = 0, 1, 2, 3, 16
TABLE_FORMAT = DataFormat.Float32


def rope_program(plan: RopePlan, x: DeviceTensor, cos: DeviceTensor, sin: DeviceTensor, *,
                 table_row0: int = 0) -> Program:
    """x's token i takes the tables' row table_row0 + i (table_row0 a multiple of 32: tables resident for
    many positions, a chunk starting there reads its own rows)."""
    s = plan.shape
    if table_row0 < 0 or table_row0 % TILE:
        raise RopeShapeError(f"table_row0 {table_row0} must be a non-negative multiple of {TILE} (whole table tile "
                             "rows); start chunks at multiples of 32 tokens")
    if x.shape != (s.tokens, s.heads * s.head_dim) or x.data_format is not DataFormat.Float16_b:
        raise RopeShapeError(f"x must be [{s.tokens}, {s.heads * s.head_dim}] Float16_b; got {list(x.shape)} "
                             f"{x.data_format.name}")
    for name, t in (("cos", cos), ("sin", sin)):
        need = table_row0 + s.tokens
        if t.shape[-1] != s.table_width or t.shape[0] < need or t.data_format is not TABLE_FORMAT:
            raise RopeShapeError(f"{name} must be [>= {need}, {s.table_width}] Float32 (rows {table_row0}.."
                                 f"{need - 1} for this chunk); got {list(t.shape)} {t.data_format.name}")
    cores = [CoreCoord(i % GRID_X, i // GRID_X) for i in range(plan.num_cores)]
    ranges, first = {}, 0
    for core, n in zip(cores, plan.core_units):
        ranges[core] = [first, n]
        first += n
    all_cores = CoreRangeSet.of(cores)
    r = s.rotary_tiles
    reader = Kernel(KERNELS / "rope_reader.cpp", Role.RISCV_1, all_cores, [*x.accessor_args(), *cos.accessor_args()],
                    common_runtime_args=[x.address, cos.address, sin.address, s.heads, s.head_tiles, r, x.tiles_w,
                                         s.rotary_dim // 2 if s.sub_tile else 0, table_row0 // TILE],
                    runtime_args=dict(ranges), noc=DRAM_READ_NOC)
    compute = Kernel(KERNELS / "rope_compute.cpp", Role.COMPUTE, all_cores, [],
                     common_runtime_args=[s.heads, r, int(s.sub_tile)], runtime_args=dict(ranges),
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=True,
                                                  unpack_to_dest_fp32=frozenset({CB_COS, CB_SIN})))
    writer = Kernel(KERNELS / "rope_writer.cpp", Role.RISCV_0, all_cores, x.accessor_args(),
                    common_runtime_args=[x.address, s.heads, s.head_tiles, r, x.tiles_w], runtime_args=dict(ranges),
                    noc=DRAM_WRITE_NOC)
    bf16 = DataFormat.Float16_b
    cbs = [CircularBuffer(CB_X, bf16, bf16.tile_bytes, r * INPUT_BUFFERING, all_cores),
           CircularBuffer(CB_COS, TABLE_FORMAT, TABLE_FORMAT.tile_bytes, r, all_cores),
           CircularBuffer(CB_SIN, TABLE_FORMAT, TABLE_FORMAT.tile_bytes, r, all_cores),
           CircularBuffer(CB_Y, bf16, bf16.tile_bytes, r * OUT_BUFFERING, all_cores)]
    if s.sub_tile:
        cbs.append(CircularBuffer(CB_SWAP, bf16, bf16.tile_bytes, INPUT_BUFFERING, all_cores))
    return Program([reader, compute, writer], cbs, inputs={"x": x, "cos": cos, "sin": sin}, outputs={"x": x},
                   name=f"rope_T{s.tokens}_h{s.heads}_d{s.head_dim}_r{s.rotary_dim}")
