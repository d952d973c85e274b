"""tt-metal's softmax program (ttnn.softmax, the attention-optimized factory, small-kernel path, no mask).

Kernels (ttnn 0.81.1, normalization/softmax/device/kernels/attention/):
    dataflow/reader_unary_interleaved_sm.cpp                 RISCV_1: scaler tiles, then rows of x in blocks
    compute/softmax.cpp                                      exp, row sums, reciprocal, multiply
    dataflow/writer_unary_interleaved_start_id_blocked_sm.cpp  RISCV_0: rows of y in blocks

These kernels use the Metal 2.0 program spec: dataflow buffers, tensors and arguments are bound by NAME
(dfb::in0, tensor::src, args::blk), not by CB index and argument position. This module describes the
program as the factory does, by names (NamedProgramSpec), and named_program turns it into a Program whose
kernels carry those names (ttprefill.device.metal2 generates the headers).

Facts mirrored from the factory (softmax_program_factory_attention_optimized.cpp): block size 4 with fp32
DST accumulation else 8, reduced to a divisor of Wt when that costs no extra blocks; buffer capacities
(in0 and out0 two blocks, exps Wt rounded up to blocks, one tile each for the scalers, the reciprocal and
the padding mask); formats (intermediates fp32 with fp32 DST, else bf16); rows split over cores as
split_work_to_cores does (the first group one row more), core i at (i % 8, i // 8); argument names.

tt-metal's layernorm / rmsnorm program (ttnn.layer_norm and ttnn.rms_norm, interleaved multi-core factory,
the small-tensor path: every buffer holds a whole row; not Welford, not the large-tensor or sharded kernels).

Kernels (ttnn 0.81.1, normalization/layernorm/device/kernels/):
    dataflow/reader_unary_interleaved_ln.cpp                 RISCV_1: scaler and eps tiles, rows of x (and b)
                                                             in blocks, gamma/beta once
    compute/layernorm.cpp                                    mean, x - mean, variance, rsqrt, * gamma + beta
    dataflow/writer_unary_interleaved_start_id_blocked.cpp   RISCV_0: rows of y in blocks

Facts mirrored from the factory (layernorm_op_multi_core.cpp, LayerNormMultiCoreProgramFactory, read at
tt-metal 015365c6 / 5aa66d6b, whose kernels still took CB indices; the wheel's Metal 2.0 kernels, which are
authoritative, give the names): block size 4 with fp32 DST accumulation else 8 (no divisor search); Wt
rounded up to whole blocks sizes in/xmm/xmm2/gamma/beta, two blocks for out/inb/fusion (and x without a
pre-add), 8 tiles for ex2pe, 2 for ex/ex2/scaler/eps; a fused pre-add makes in two blocks and x a whole
row; intermediates fp32 with fp32 DST else bf16, scaler and eps bf16; RMSNORM has no ex, and no xmm or x
unless it pre-adds (xmm is then the input FIFO itself); FUSE_GAMMA/FUSE_BETA/FUSE_PRE_ADD/RMSNORM defines;
float32_reduction = fp32 DST and not legacy_reduction; eps passed as its fp32 bits; rows split as softmax.

NoCs: both factories give their reader tt-metal's reader configuration and their writer the writer's
(Reader/WriterDataMovementConfig, create_reader/writer_datamovement_config): NoC 0 and NoC 1 on Wormhole.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
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
from ttprefill.hw import TILE

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
    noc: int | None = None  # a data-movement kernel's NoC, as its factory configures it


@dataclass
class NamedProgramSpec:
    """A program as a Metal 2.0 factory describes it: buffers, kernels and arguments by name."""
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


def softmax_spec(s: SoftmaxShape) -> NamedProgramSpec:
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
                         defines=dict(defines), noc=DRAM_READ_NOC)
    writer = NamedKernel(WRITER, "riscv_0", ["out0", "mask_padded"], {"dst": "dst"},
                         {"num_datum_padded": Wt * TILE - s.width, "tile_hw": TILE * TILE}, noc=DRAM_WRITE_NOC)
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
    return NamedProgramSpec(dfbs, [reader, writer, compute], cores, MathFidelity.HiFi4, s.fp32_dest_acc, False)


def named_program(device, spec: NamedProgramSpec, tensors: dict, inputs: tuple[str, ...], outputs: tuple[str, ...],
                  name: str) -> Program:
    """The Program for a spec of Metal 2.0 kernels: each dataflow buffer becomes a CB (indices in declaration
    order: the Metal 2.0 host allocates them itself, and the kernels only see the names), each named argument
    an args:: name, each tensor a tensor:: binding."""
    cores = CoreRangeSet.of(spec.cores)
    index = {d.name: i for i, d in enumerate(spec.dfbs)}
    cbs = [CircularBuffer(index[d.name], d.data_format, d.data_format.tile_bytes, d.entries, cores) for d in spec.dfbs]
    kernels = []
    for k in spec.kernels:
        role = Role(k.role)
        kernel = Kernel(kernel_path(k.source), role, cores, defines=dict(k.defines),
                        named_compile_time_args=dict(k.compile_time_args),
                        runtime_arg_names=list(next(iter(k.runtime_args.values()))),
                        dfb_bindings={n: index[n] for n in k.dfbs},
                        tensor_bindings={acc: TensorBinding(tuple(tensors[t].accessor_args()), tensors[t].address)
                                         for acc, t in k.tensors.items()},
                        metal2=True, noc=k.noc,
                        compute_config=ComputeConfig(spec.fidelity, spec.fp32_dest_acc, spec.math_approx)
                        if role is Role.COMPUTE else None)
        kernel.runtime_args = {core: list(args.values()) for core, args in k.runtime_args.items()}
        kernels.append(kernel)
    return Program(kernels, cbs, inputs={t: tensors[t] for t in inputs}, outputs={t: tensors[t] for t in outputs},
                   name=name)


def softmax_program(device, s: SoftmaxShape, tensors: dict | None = None) -> tuple[Program, dict]:
    """The softmax Program; allocates src and dst [rows, width] bf16 unless given."""
    spec = softmax_spec(s)
    tensors = tensors or {"src": device.allocate((s.rows, s.width), BF16), "dst": device.allocate((s.rows, s.width), BF16)}
    return named_program(device, spec, tensors, ("src",), ("dst",), "upstream_softmax"), tensors


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


# ---------------------------------------------------------------------------------------------- layernorm
LN_DIR = "normalization/layernorm/device/kernels/"
LN_READER = LN_DIR + "dataflow/reader_unary_interleaved_ln.cpp"
LN_WRITER = LN_DIR + "dataflow/writer_unary_interleaved_start_id_blocked.cpp"
LN_COMPUTE = LN_DIR + "compute/layernorm.cpp"


@dataclass(frozen=True)
class LayerNormShape:
    rows: int  # all leading dims folded: the tensor is [rows, width]
    width: int
    rms: bool = False  # ttnn.rms_norm: no mean subtraction
    gamma: bool = True
    beta: bool = True
    pre_add: bool = False  # a residual b: the op normalizes x + b
    fp32_dest_acc: bool = False
    eps: float = 1e-5

    def __post_init__(self):
        if self.rms and self.beta:
            raise ValueError("rms_norm takes no beta: pass beta=False with rms=True")
        if self.rows <= 0 or self.width <= 0:
            raise ValueError(f"layernorm needs a positive shape, got {self.rows} x {self.width}")


def layernorm_block_size(fp32_dest_acc: bool) -> int:
    """The DST-filling block of the interleaved factory: 4 tiles with fp32 DST, else 8 (any Wt)."""
    return 4 if fp32_dest_acc else 8


def layernorm_spec(s: LayerNormShape) -> NamedProgramSpec:
    """The interleaved multi-core factory's program for this shape, by names (buffers, args, defines)."""
    Wt = -(-s.width // TILE)
    Ht_total = -(-s.rows // TILE)
    blk = layernorm_block_size(s.fp32_dest_acc)
    row_t = -(-Wt // blk) * blk  # a row rounded up to whole blocks
    im = F32 if s.fp32_dest_acc else BF16
    dfbs = [DfbSpec("in", BF16, 2 * blk if s.pre_add else row_t), DfbSpec("out", BF16, 2 * blk)]
    if not s.rms:
        dfbs.append(DfbSpec("ex", im, 2))
    dfbs += [DfbSpec("scaler", BF16, 2), DfbSpec("eps", BF16, 2), DfbSpec("ex2", im, 2)]
    if not s.rms or s.pre_add:
        dfbs.append(DfbSpec("xmm", im, row_t))
    dfbs += [DfbSpec("xmm2", im, row_t), DfbSpec("ex2pe", im, 8)]
    if s.gamma or s.beta:
        dfbs.append(DfbSpec("fusion", im, 2 * blk))
    if s.gamma:
        dfbs.append(DfbSpec("gamma", BF16, row_t))
    if s.beta:
        dfbs.append(DfbSpec("beta", BF16, row_t))
    if s.pre_add:
        if not s.rms:
            dfbs.append(DfbSpec("x", im, row_t))
        dfbs.append(DfbSpec("inb", BF16, 2 * blk))

    defines = {}
    if s.gamma:
        defines["FUSE_GAMMA"] = "1"
    if s.beta:
        defines["FUSE_BETA"] = "1"
    if s.pre_add:
        defines["FUSE_PRE_ADD"] = "1"
    if s.rms:
        defines["RMSNORM"] = "1"
    reader_dfbs = ["in", "scaler", "eps"] + (["inb"] if s.pre_add else []) + (["gamma"] if s.gamma else []) \
        + (["beta"] if s.beta else [])
    reader_tensors = {"src": "src"} | ({"src_b": "src_b"} if s.pre_add else {}) \
        | ({"gamma": "gamma"} if s.gamma else {}) | ({"beta": "beta"} if s.beta else {})
    reader = NamedKernel(LN_READER, "riscv_1", reader_dfbs, reader_tensors, {"block_size": blk, "W": s.width},
                         defines=dict(defines), noc=DRAM_READ_NOC)
    writer = NamedKernel(LN_WRITER, "riscv_0", ["out"], {"dst": "dst"}, {"block_size": blk}, noc=DRAM_WRITE_NOC)
    # The compute kernel opens every buffer of the program under these defines (tests/upstream checks it).
    compute = NamedKernel(LN_COMPUTE, "compute", [d.name for d in dfbs], {},
                          {"Wt": Wt, "block_size": blk, "do_gamma": int(s.gamma), "do_beta": int(s.beta),
                           "fp32_dest_acc_en": int(s.fp32_dest_acc), "float32_reduction": int(s.fp32_dest_acc),
                           "W": s.width, "tile_width": TILE},
                          defines=dict(defines))
    eps_bits = int(np.float32(s.eps).view(np.uint32))
    cores, row = [], 0
    for i, n in enumerate(split_rows(Ht_total)):
        core = CoreCoord(i % GRID[0], i // GRID[0])
        cores.append(core)
        reader.runtime_args[core] = {"NCHt": n, "Wt": Wt, "reader_start": row, "eps": eps_bits}
        writer.runtime_args[core] = {"Wt": Wt, "num_tile_rows": n, "writer_start": row * Wt}
        compute.runtime_args[core] = {"NCHt": n}
        row += n
    # ttnn's layernorm default compute config: HiFi4, approximate SFPU mode, fp32 DST off unless asked.
    return NamedProgramSpec(dfbs, [reader, writer, compute], cores, MathFidelity.HiFi4, s.fp32_dest_acc, True)


def layernorm_program(device, s: LayerNormShape, tensors: dict | None = None) -> tuple[Program, dict]:
    """The layernorm/rmsnorm Program; allocates src, dst [rows, width] and the gamma/beta rows [1, width]
    and residual src_b the shape asks for (bf16, tile layout) unless given."""
    if tensors is None:
        tensors = {"src": device.allocate((s.rows, s.width), BF16), "dst": device.allocate((s.rows, s.width), BF16)}
        if s.pre_add:
            tensors["src_b"] = device.allocate((s.rows, s.width), BF16)
        for name, wanted in (("gamma", s.gamma), ("beta", s.beta)):
            if wanted:
                tensors[name] = device.allocate((1, s.width), BF16)
    inputs = tuple(t for t in ("src", "src_b", "gamma", "beta") if t in tensors)
    name = "upstream_rmsnorm" if s.rms else "upstream_layernorm"
    return named_program(device, layernorm_spec(s), tensors, inputs, ("dst",), name), tensors


def layernorm_reference(s: LayerNormShape, x, b=None, gamma=None, beta=None):
    """fp64, from the op's definition: normalize each row of x (+ b) over its width (rms: by the root mean
    square, no mean subtracted), then scale by gamma and shift by beta."""
    x = np.asarray(x, np.float64) + (0.0 if b is None else np.asarray(b, np.float64))
    if s.rms:
        y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + s.eps)
    else:
        mean = np.mean(x, axis=-1, keepdims=True)
        y = (x - mean) / np.sqrt(np.mean((x - mean) ** 2, axis=-1, keepdims=True) + s.eps)
    if gamma is not None:
        y = y * np.asarray(gamma, np.float64).reshape(1, -1)
    if beta is not None:
        y = y + np.asarray(beta, np.float64).reshape(1, -1)
    return y


def _check_layernorm(device, s: LayerNormShape, seed: int) -> dict:
    from ttprefill.device.formats import round_to_bf16

    rng = np.random.default_rng(seed)
    data = {"src": round_to_bf16((rng.standard_normal((s.rows, s.width)) * 2 + 0.5).astype(np.float32))}
    if s.pre_add:
        data["src_b"] = round_to_bf16(rng.standard_normal((s.rows, s.width)).astype(np.float32))
    if s.gamma:
        data["gamma"] = round_to_bf16((1 + 0.5 * rng.standard_normal((1, s.width))).astype(np.float32))
    if s.beta:
        data["beta"] = round_to_bf16(rng.standard_normal((1, s.width)).astype(np.float32))
    program, t = layernorm_program(device, s)
    for name, array in data.items():
        device.write(t[name], array)
    report = device.run(program)
    y = device.download(t["dst"])
    ref = layernorm_reference(s, data["src"], data.get("src_b"), data.get("gamma"), data.get("beta"))
    what = "rmsnorm" if s.rms else "layernorm"
    return {"cycles": report.cycles} | expect_close(ref, y, what, 0.999, 0.02)


# Widths: 256 = one whole block; 320 = 10 tiles, a block of 8 and a tail of 2; 200 = 7 tiles, the last
# partial (the reader's second scaler tile masks its padding out of the sums).
LAYERNORM_SHAPES = {
    "layernorm/rows64_w256_gamma_beta": LayerNormShape(64, 256),
    "layernorm/rows320_w320_gamma_beta": LayerNormShape(320, 320),  # ten tile rows over ten cores
    "layernorm/rows96_w200_gamma_beta": LayerNormShape(96, 200),
    "layernorm/rows64_w320_pre_add_gamma_beta": LayerNormShape(64, 320, pre_add=True),
    "layernorm/rows64_w320_fp32_gamma_beta": LayerNormShape(64, 320, fp32_dest_acc=True),
    "rmsnorm/rows64_w256_gamma": LayerNormShape(64, 256, rms=True, beta=False),
    "rmsnorm/rows320_w320_gamma": LayerNormShape(320, 320, rms=True, beta=False),
    "rmsnorm/rows64_w320_pre_add_gamma": LayerNormShape(64, 320, rms=True, beta=False, pre_add=True),
}


def _register_layernorm(name: str, shape: LayerNormShape, seed: int) -> None:
    register(name, "normalization", (LN_READER, LN_COMPUTE, LN_WRITER),
             build=lambda device: layernorm_program(device, shape)[0])(lambda device: _check_layernorm(device, shape, seed))


for _seed, (_name, _shape) in enumerate(LAYERNORM_SHAPES.items(), start=11):
    _register_layernorm(_name, _shape, _seed)
