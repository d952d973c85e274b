"""tt-metal's softmax program (ttnn.softmax, the attention-optimized factory, small-kernel path, no mask).

Kernels (ttnn 0.81.1, normalization/softmax/device/kernels/attention/):
    dataflow/reader_unary_interleaved_sm.cpp                 RISCV_1: scaler tiles, then rows of x in blocks
    compute/softmax.cpp                                      exp, row sums, reciprocal, multiply
    dataflow/writer_unary_interleaved_start_id_blocked_sm.cpp  RISCV_0: rows of y in blocks

These kernels use the Metal 2.0 program spec: dataflow buffers, tensors and arguments are bound by NAME
(dfb::in0, tensor::src, args::blk), not by CB index and argument position. This module describes the
program as the factory does, by names (SoftmaxSpec), and softmax_program turns it into a Program whose
kernels carry those names (ttprefill.device.metal2 generates the headers).

Facts mirrored from the factory (softmax_program_factory_attention_optimized.cpp): block size 4 with fp32
DST accumulation else 8, reduced to a divisor of Wt when that costs no extra blocks; buffer capacities
(in0 and out0 two blocks, exps Wt rounded up to blocks, one tile each for the scalers, the reciprocal and
the padding mask); formats (intermediates fp32 with fp32 DST, else bf16); rows split over cores as
split_work_to_cores does (the first group one row more), core i at (i % 8, i // 8); argument names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ttprefill.device.program import (
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
    TensorBinding,
)
from ttprefill.ops.upstream import kernel_path
from ttprefill.ops.upstream.registry import expect_close, register

TILE = 32
GRID = (8, 8)
KDIR = "normalization/softmax/device/kernels/attention/"
READER = KDIR + "dataflow/reader_unary_interleaved_sm.cpp"
WRITER = KDIR + "dataflow/writer_unary_interleaved_start_id_blocked_sm.cpp"
COMPUTE = KDIR + "compute/softmax.cpp"
BF16, F32 = DataFormat.Float16_b, DataFormat.Float32


@dataclass
class DfbSpec:
    name: str
    data_format: DataFormat
    entries: int


@dataclass
class NamedKernel:
    source: str  # relative to ttnn/cpp/ttnn/operations
    role: str  # riscv_0 | riscv_1 | compute
    dfbs: list[str]  # accessor names, each bound to the DFB of the same name
    tensors: dict[str, str]  # accessor name -> tensor parameter name
    compile_time_args: dict[str, int]
    runtime_args: dict[CoreCoord, dict[str, int]] = field(default_factory=dict)
    defines: dict[str, str] = field(default_factory=dict)


@dataclass
class SoftmaxSpec:
    dfbs: list[DfbSpec]
    kernels: list[NamedKernel]
    cores: list[CoreCoord]
    fidelity: MathFidelity
    fp32_dest_acc: bool
    math_approx: bool


@dataclass(frozen=True)
class SoftmaxShape:
    rows: int  # all leading dims folded: the tensor is [rows, width]
    width: int
    fp32_dest_acc: bool = False
    numeric_stable: bool = True


def block_size(Wt: int, fp32_dest_acc: bool) -> int:
    blk = 4 if fp32_dest_acc else 8
    if Wt % blk:
        divisor = max(d for d in range(1, blk + 1) if Wt % d == 0)
        if -(-Wt // blk) == Wt // divisor:
            blk = divisor
    return blk


def split_rows(rows: int, max_cores: int = GRID[0] * GRID[1]) -> list[int]:
    """Tile rows per core: as even as possible, the larger share first."""
    n = min(rows, max_cores)
    base, extra = divmod(rows, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


def softmax_spec(s: SoftmaxShape) -> SoftmaxSpec:
    Wt, Ht_total = -(-s.width // TILE), -(-s.rows // TILE)
    blk = block_size(Wt, s.fp32_dest_acc)
    im = F32 if s.fp32_dest_acc else BF16
    blocks = -(-Wt // blk)
    stable_in0 = s.numeric_stable and s.width == Wt * TILE  # no mask; padding adds the mask path
    padded = s.width != Wt * TILE
    in0_t = blocks * blk if stable_in0 else 2 * blk
    dfbs = [DfbSpec("in0", BF16, in0_t), DfbSpec("out0", BF16, 2 * blk), DfbSpec("recip_sum_exps", im, 1),
            DfbSpec("max_scaler", BF16, 1), DfbSpec("sum_scaler", im, 1),
            DfbSpec("exps", im, blocks * blk), DfbSpec("mask_padded", BF16, 1)]
    if s.numeric_stable:
        dfbs.append(DfbSpec("max", im, 1))
    if s.numeric_stable and padded:
        dfbs.append(DfbSpec("x", im, blocks * blk))
    defines = {"NUMERIC_STABLE": "1"} if s.numeric_stable else {}
    compute_defines = dict(defines, EXP_APPROX="0", ENABLE_FP32_DEST_ACC="1" if s.fp32_dest_acc else "0")
    if padded:
        compute_defines["MASK_PADDED_DATA"] = "1"
    reader = NamedKernel(READER, "riscv_1", ["in0", "max_scaler", "sum_scaler"], {"src": "src"}, {"in0_t": in0_t},
                         defines=dict(defines))
    writer = NamedKernel(WRITER, "riscv_0", ["out0", "mask_padded"], {"dst": "dst"},
                         {"num_datum_padded": Wt * TILE - s.width, "tile_hw": TILE * TILE})
    compute_dfbs = ["in0", "max_scaler", "sum_scaler", "mask_padded", "out0", "exps", "recip_sum_exps"]
    compute_dfbs += (["max"] if s.numeric_stable else []) + (["x"] if s.numeric_stable and padded else [])
    compute = NamedKernel(COMPUTE, "compute", compute_dfbs, {}, {"in0_t": in0_t}, defines=compute_defines)
    cores, row = [], 0
    for i, n in enumerate(split_rows(Ht_total)):
        core = CoreCoord(i % GRID[0], i // GRID[0])
        cores.append(core)
        reader.runtime_args[core] = {"blk": blk, "num_rows": n, "tile_offset": row * Wt, "Wt": Wt}
        writer.runtime_args[core] = {"num_tiles": n * Wt, "tile_offset": row * Wt, "blk": blk,
                                     "mask_padded_data": int(padded), "Wt": Wt}
        compute.runtime_args[core] = {"num_rows": n, "Ht": Ht_total, "Wt": Wt, "blk": blk, "start_ht": row % Ht_total}
        row += n
    return SoftmaxSpec(dfbs, [reader, writer, compute], cores, MathFidelity.HiFi4, s.fp32_dest_acc, False)


def softmax_program(device, s: SoftmaxShape, tensors: dict | None = None) -> tuple[Program, dict]:
    """The Program for the spec: each dataflow buffer becomes a CB (indices in declaration order: the
    Metal 2.0 host allocates them itself, and the kernels only see the names), each named argument
    an args:: name, each tensor a tensor:: binding. Allocates src and dst [rows, width] bf16 unless given."""
    spec = softmax_spec(s)
    tensors = tensors or {"src": device.allocate((s.rows, s.width), BF16), "dst": device.allocate((s.rows, s.width), BF16)}
    cores = CoreRangeSet.of(spec.cores)
    index = {d.name: i for i, d in enumerate(spec.dfbs)}
    cbs = [CircularBuffer(index[d.name], d.data_format, d.data_format.tile_bytes, d.entries, cores) for d in spec.dfbs]
    kernels = []
    for k in spec.kernels:
        role = Role(k.role)
        kernel = Kernel(kernel_path(k.source), role, cores, defines=dict(k.defines),
                        named_compile_time_args=dict(k.compile_time_args),
                        runtime_arg_names=list(next(iter(k.runtime_args.values()))),
                        dfb_bindings={name: index[name] for name in k.dfbs},
                        tensor_bindings={acc: TensorBinding(tuple(tensors[t].accessor_args()), tensors[t].address)
                                         for acc, t in k.tensors.items()},
                        metal2=True,
                        compute_config=ComputeConfig(spec.fidelity, spec.fp32_dest_acc, spec.math_approx)
                        if role is Role.COMPUTE else None)
        kernel.runtime_args = {core: list(args.values()) for core, args in k.runtime_args.items()}
        kernels.append(kernel)
    program = Program(kernels, cbs, inputs={"src": tensors["src"]}, outputs={"dst": tensors["dst"]},
                      name="upstream_softmax")
    return program, tensors


def _check_softmax(device, s: SoftmaxShape, seed: int) -> dict:
    import torch

    from ttprefill.device.formats import round_to_bf16

    x = round_to_bf16(np.random.default_rng(seed).standard_normal((s.rows, s.width)).astype(np.float32) * 3)
    program, t = softmax_program(device, s)
    device.write(t["src"], x)
    report = device.run(program)
    y = device.download(t["dst"])
    ref = torch.softmax(torch.from_numpy(x.astype(np.float64)), dim=-1).numpy()
    return {"cycles": report.cycles} | expect_close(ref, y, "softmax", 0.999, 0.01)


STABLE_SHAPE = SoftmaxShape(64, 256)
PADDED_SHAPE = SoftmaxShape(96, 200)  # width 200: the writer's padding mask hides the last 24 columns
PLAIN_SHAPE = SoftmaxShape(320, 96, numeric_stable=False)  # ten tile rows over ten cores, no max subtraction


@register("softmax/rows64_w256_stable", "normalization", (READER, COMPUTE, WRITER),
          build=lambda device: softmax_program(device, STABLE_SHAPE)[0])
def _softmax(device) -> dict:
    return _check_softmax(device, STABLE_SHAPE, seed=5)


@register("softmax/rows96_w200_padded_stable", "normalization", (READER, COMPUTE, WRITER),
          build=lambda device: softmax_program(device, PADDED_SHAPE)[0])
def _softmax_padded(device) -> dict:
    return _check_softmax(device, PADDED_SHAPE, seed=6)


@register("softmax/rows320_w96", "normalization", (READER, COMPUTE, WRITER),
          build=lambda device: softmax_program(device, PLAIN_SHAPE)[0])
def _softmax_plain(device) -> dict:
    return _check_softmax(device, PLAIN_SHAPE, seed=7)
