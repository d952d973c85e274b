"""tt-metal's eltwise unary SFPU program (ttnn.exp, ttnn.gelu, ttnn.relu, ...), as its factory builds it.

Compute kernel (ttnn 0.81.1): eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp. The op itself is
not in the kernel: the unary factory (unary_program_factory.cpp, through unary_op_utils.cpp's
get_block_defines) turns the op chain into defines that the kernel expands after copy_tile:

- SFPU_OP_CHAIN_0 = "SFPU_OP_CHAIN_0_INIT_0 SFPU_OP_CHAIN_0_FUNC_0 [SFPU_OP_CHAIN_0_INIT_1 ...]",
- SFPU_OP_CHAIN_0_INIT_<i> / SFPU_OP_CHAIN_0_FUNC_<i>: the i-th op's init and call on DST tile 0,
- SFPU_OP_<FAMILY>_INCLUDE = 1 for each op, which api/compute/eltwise_unary/sfpu_split_includes.h turns
  into the op's API header,
- INP_FLOAT / INP_FLOAT32 / INP_INT32 / INP_UINT32 for the input's data type.

The rest of the program is the factory's interleaved layout (data_movement.unary_interleaved_program:
tt-metal's reader_unary_interleaved_start_id.cpp and writer_unary_interleaved_start_id.cpp, CBs c_0 and
c_2, HiFi4, tiles split over cores as split_work_to_cores does).

The op strings below are written from the signatures in the wheel's API headers and the call forms
the factory emits (e.g. "exp_tile_init<0u>();" for ttnn.exp without the fast mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ttprefill.device.program import DataFormat, Program

from .data_movement import UNARY_COMPUTE, UNARY_READER, UNARY_WRITER, unary_interleaved_program
from .registry import expect_close, register


@dataclass(frozen=True)
class UnaryOp:
    """One op of a chain: its include family, its init and its call on DST tile `{idst}`, and the
    reference it is checked against (fp64 numpy) with the input range it is checked on."""

    name: str
    include: str  # SFPU_OP_<include>_INCLUDE
    init: str
    call: str  # with "{idst}" for the DST tile index
    reference: Callable[[np.ndarray], np.ndarray]
    low: float = -4.0
    high: float = 4.0


def _erf(x: np.ndarray) -> np.ndarray:
    import torch

    return torch.special.erf(torch.from_numpy(x)).numpy()


def gelu_lut(x: np.ndarray) -> np.ndarray:
    """tt-llk's approximate gelu (see api/compute/eltwise_unary/gelu.h): x/2 + a 6-segment linear fit of
    x (Phi(x) - 1/2) in |x|, coefficients as 16-bit floats."""
    slope = np.float16([0.1928, 0.4939, 0.6188, 0.6099, 0.5402, 0.5]).astype(np.float64)
    intercept = np.float16([-0.00010443, -0.1604, -0.2796, -0.2635, -0.1194, 0.0]).astype(np.float64)
    a = np.abs(x)
    k = np.searchsorted(np.array([0.5, 1.0, 1.5, 2.0, 3.0]), a, side="right")
    return 0.5 * x + slope[k] * a + intercept[k]


OPS: dict[str, UnaryOp] = {
    op.name: op
    for op in (
        UnaryOp("exp", "EXP", "exp_tile_init<0u>();", "exp_tile<0u>({idst});", np.exp),
        UnaryOp("gelu", "GELU", "gelu_tile_init<0u>();", "gelu_tile<0u>({idst});",
                lambda x: 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))),
        UnaryOp("gelu_approx", "GELU", "gelu_tile_init<1u>();", "gelu_tile<1u>({idst});", lambda x: gelu_lut(x)),
        # the fast exp: the simulator computes exp exactly on this path too (api/compute/eltwise_unary/exp.h)
        UnaryOp("exp_approx", "EXP", "exp_tile_init<1u>();", "exp_tile<1u>({idst});", np.exp),
        UnaryOp("silu", "COMPUTE_KERNEL_API", "silu_tile_init();", "silu_tile({idst});", lambda x: x / (1.0 + np.exp(-x))),
        UnaryOp("sqrt", "SQRT", "sqrt_tile_init();", "sqrt_tile({idst});", np.sqrt, 0.01, 16.0),
        UnaryOp("recip", "RECIP", "recip_tile_init();", "recip_tile({idst});", lambda x: 1.0 / x, 0.05, 8.0),
        UnaryOp("relu", "RELU_FAMILY", "relu_tile_init();", "relu_tile({idst});", lambda x: np.maximum(x, 0.0)),
        UnaryOp("neg", "NEG", "negative_tile_init();", "negative_tile({idst});", np.negative),
        UnaryOp("abs", "COMPUTE_KERNEL_API", "abs_tile_init();", "abs_tile({idst});", np.abs),
        UnaryOp("tanh", "COMPUTE_KERNEL_API", "tanh_tile_init<0u>();", "tanh_tile<0u>({idst});", np.tanh),
        UnaryOp("log", "COMPUTE_KERNEL_API", "log_tile_init();", "log_tile({idst});", np.log, 0.05, 16.0),
        UnaryOp("sin", "TRIG_FAMILY", "sin_tile_init();", "sin_tile({idst});", np.sin),
        # ttnn.mul with a float scalar: MUL_UNARY_SFPU, the scalar as fp32 bits (here 0.75).
        # the factory's Int32 forms (INT32 input: relu_tile_int32, abs_tile_int32)
        UnaryOp("relu_int32", "RELU_FAMILY", "relu_tile_init();", "relu_tile_int32({idst});", lambda x: np.maximum(x, 0)),
        UnaryOp("abs_int32", "COMPUTE_KERNEL_API", "abs_tile_init();", "abs_tile_int32({idst});", np.abs),
        UnaryOp("mul_scalar", "BINOP_WITH_SCALAR", "binop_with_scalar_tile_init();",
                "mul_unary_tile({idst}, 0x3f400000u);", lambda x: x * 0.75),
    )
}


def input_dtype_define(fmt: DataFormat) -> str:
    """The factory's define for the input's data type."""
    return {DataFormat.Float32: "INP_FLOAT32", DataFormat.Int32: "INP_INT32", DataFormat.UInt32: "INP_UINT32"}.get(
        fmt, "INP_FLOAT")


def block_defines(chain: list[UnaryOp], input_format: DataFormat, idst: str = "0") -> dict[str, str]:
    """get_block_defines for block 0: the chain's init/call pairs, the macro that strings them together,
    one include define per family, and the input type define."""
    defines: dict[str, str] = {}
    parts = []
    for i, op in enumerate(chain):
        defines[f"SFPU_OP_CHAIN_0_INIT_{i}"] = op.init
        defines[f"SFPU_OP_CHAIN_0_FUNC_{i}"] = op.call.format(idst=idst)
        defines[f"SFPU_OP_{op.include}_INCLUDE"] = "1"
        parts += [f"SFPU_OP_CHAIN_0_INIT_{i}", f"SFPU_OP_CHAIN_0_FUNC_{i}"]
    defines["SFPU_OP_CHAIN_0"] = " ".join(parts)
    defines[input_dtype_define(input_format)] = "1"
    return defines


def unary_sfpu_program(src, dst, chain: list[UnaryOp], *, grid: tuple[int, int] = (1, 1),
                       fp32_dest_acc_en: bool | None = None) -> Program:
    """ttnn's eltwise unary program for interleaved tiled tensors running `chain` on every tile.
    fp32 DST follows the factory's rule by default: on when the input or the output is Float32 or a
    32-bit integer format."""
    if fp32_dest_acc_en is None:
        wide = (DataFormat.Float32, DataFormat.Int32, DataFormat.UInt32)
        fp32_dest_acc_en = src.data_format in wide or dst.data_format in wide
    name = "upstream_unary_" + "_".join(op.name for op in chain)
    return unary_interleaved_program(src, dst, grid=grid, defines=block_defines(chain, src.data_format),
                                     fp32_dest_acc_en=fp32_dest_acc_en, name=name)


def sample_input(op: UnaryOp, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Inputs in the op's checked range, bf16-representable."""
    from ttprefill.device.formats import round_to_bf16

    x = np.random.default_rng(seed).uniform(op.low, op.high, shape).astype(np.float32)
    return round_to_bf16(x)


def typecast_op(src: DataFormat, dst: DataFormat) -> UnaryOp:
    """ttnn.typecast as the factory emits it: typecast_tile<in, out> with tt::DataFormat values."""
    return UnaryOp(f"typecast_{src.name}_{dst.name}", "TYPECAST", f"typecast_tile_init<{int(src)}u, {int(dst)}u>();",
                   f"typecast_tile<{int(src)}u, {int(dst)}u>({{idst}});", lambda x: x)


def run_unary(device, chain: list[UnaryOp], x: np.ndarray, fmt: DataFormat = DataFormat.Float16_b,
              grid: tuple[int, int] = (1, 1), out_fmt: DataFormat | None = None):
    """Upload x, run the program, return (output, run report)."""
    src = device.upload(x, fmt)
    dst = device.allocate(x.shape, out_fmt or fmt)
    try:
        report = device.run(unary_sfpu_program(src, dst, chain, grid=grid))
        return device.download(dst), report
    finally:
        device.free(src)
        device.free(dst)


def reference(chain: list[UnaryOp], x: np.ndarray) -> np.ndarray:
    y = x.astype(np.float64)
    for op in chain:
        y = op.reference(y)
    return y


def _check(device, names: list[str]) -> dict:
    chain = [OPS[n] for n in names]
    x = sample_input(chain[0], (64, 128), seed=len(names))
    y, report = run_unary(device, chain, x)
    return {"cycles": report.cycles} | expect_close(reference(chain, x), y, "_".join(names), 0.999, 0.01)


def _register(names: list[str]) -> None:
    @register(f"eltwise_unary/{'_'.join(names)}", "eltwise", (UNARY_READER, UNARY_COMPUTE, UNARY_WRITER))
    def _entry(device) -> dict:
        return _check(device, names)


for _names in (["exp"], ["gelu"], ["silu"], ["sqrt"], ["recip"], ["relu"], ["exp", "relu"]):
    _register(_names)


# ---------------------------------------------------------------------------------------------------
# Binary SFPU ops: binary_ng with an SFPU op (ttnn.add of Int32 tensors, ttnn.divide, ttnn.pow, ...)
#
# binary_ng's factory picks eltwise_binary_sfpu_no_bcast.cpp for an op it runs on the SFPU: both tiles are
# copied into DST (LHS at 2i, RHS at 2i+1) and BINARY_SFPU_OP(2i, 2i+1, 2i) combines them, after one
# BINARY_SFPU_INIT at the start. The readers, writer, CBs and work split are the FPU path's
# (ttprefill/ops/upstream/binary.py); the compute kernel, its defines and its config differ: fp32 DST
# for Float32 / Int32 / UInt32 outputs, and Float32 inputs unpacked straight to DST (UnpackToDestFp32).

BINARY_SFPU_COMPUTE = "eltwise/binary_ng/device/kernels/compute/eltwise_binary_sfpu_no_bcast.cpp"


@dataclass(frozen=True)
class BinarySfpuOp:
    name: str
    init: str  # BINARY_SFPU_INIT
    op: str  # BINARY_SFPU_OP: called as op(lhs, rhs, out)
    reference: Callable[[np.ndarray, np.ndarray], np.ndarray]


def _wrap32(v: np.ndarray) -> np.ndarray:
    return (np.asarray(v, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


BINARY_OPS: dict[str, BinarySfpuOp] = {
    op.name: op
    for op in (
        BinarySfpuOp("add", "add_binary_tile_init();", "add_binary_tile", np.add),
        BinarySfpuOp("sub", "sub_binary_tile_init();", "sub_binary_tile", np.subtract),
        BinarySfpuOp("mul", "mul_binary_tile_init();", "mul_binary_tile", np.multiply),
        BinarySfpuOp("div", "div_binary_tile_init();", "div_binary_tile", np.divide),
        BinarySfpuOp("maximum", "binary_max_tile_init();", "binary_max_tile", np.maximum),
        BinarySfpuOp("atan2", "atan2_binary_tile_init();", "atan2_binary_tile", np.arctan2),
        BinarySfpuOp("add_int32", "add_int_tile_init();", "add_int_tile<DataFormat::Int32>",
                     lambda a, b: _wrap32(a.astype(np.int64) + b)),
        BinarySfpuOp("mul_int32", "mul_int_tile_init<DataFormat::Int32>();", "mul_int_tile<DataFormat::Int32>",
                     lambda a, b: _wrap32(a.astype(np.int64) * b)),
    )
}


def binary_sfpu_program(a, b, out, op: BinarySfpuOp, *, grid: tuple[int, int] = (1, 1)) -> Program:
    from ttprefill.device.program import ComputeConfig, Kernel, MathFidelity, Role

    from . import kernel_path
    from .binary import binary_ng_program

    base = binary_ng_program(a, b, out, "add", grid=grid)
    fpu_compute = next(k for k in base.kernels if k.role is Role.COMPUTE)
    defines = {"BINARY_SFPU_INIT": op.init, "BINARY_SFPU_OP": op.op, "PROCESS_LHS_ACTIVATIONS(i)": "",
               "PROCESS_RHS_ACTIVATIONS(i)": "", "PROCESS_POST_ACTIVATIONS(i)": ""}
    wide = (DataFormat.Float32, DataFormat.Int32, DataFormat.UInt32)
    direct = frozenset(cb for cb, t in ((0, a), (1, b)) if t.data_format == DataFormat.Float32)
    config = ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=out.data_format in wide,
                           unpack_to_dest_fp32=direct if out.data_format in wide else frozenset())
    compute = Kernel(kernel_path(BINARY_SFPU_COMPUTE), Role.COMPUTE, fpu_compute.cores, [1], defines=defines,
                     runtime_args=dict(fpu_compute.runtime_args), compute_config=config)
    kernels = [k for k in base.kernels if k.role is not Role.COMPUTE] + [compute]
    return Program(kernels=kernels, circular_buffers=base.circular_buffers, name=f"upstream_binary_sfpu_{op.name}")


def run_binary(device, op: BinarySfpuOp, x: np.ndarray, y: np.ndarray, fmt: DataFormat = DataFormat.Float16_b,
               grid: tuple[int, int] = (1, 1)):
    ta, tb = device.upload(x, fmt), device.upload(y, fmt)
    to = device.allocate(x.shape, fmt)
    try:
        report = device.run(binary_sfpu_program(ta, tb, to, op, grid=grid))
        return device.download(to), report
    finally:
        for t in (ta, tb, to):
            device.free(t)


def _check_binary(device, name: str, fmt: DataFormat) -> dict:
    op = BINARY_OPS[name]
    rng = np.random.default_rng(12)
    if fmt == DataFormat.Int32:
        x = rng.integers(-2**31, 2**31, (64, 64)).astype(np.int32)
        y = rng.integers(-2**31, 2**31, (64, 64)).astype(np.int32)
        out, report = run_binary(device, op, x, y, fmt)
        if not np.array_equal(out, op.reference(x, y)):
            from .registry import ConformanceError

            raise ConformanceError(f"{name}: {int(np.sum(out != op.reference(x, y)))} of {out.size} words differ")
        return {"cycles": report.cycles, f"{name}_exact": True}
    from ttprefill.device.formats import round_to_bf16

    x = round_to_bf16(rng.uniform(-4, 4, (64, 64)).astype(np.float32))
    y = round_to_bf16(rng.uniform(0.5, 4, (64, 64)).astype(np.float32))
    out, report = run_binary(device, op, x, y, fmt)
    return {"cycles": report.cycles} | expect_close(op.reference(x.astype(np.float64), y), out, name, 0.999, 0.01)


def _register_binary(name: str, fmt: DataFormat) -> None:
    from .binary import READER, WRITER

    @register(f"eltwise_binary_sfpu/{name}", "eltwise", (READER, BINARY_SFPU_COMPUTE, WRITER))
    def _entry(device) -> dict:
        return _check_binary(device, name, fmt)


for _name, _fmt in (("div", DataFormat.Float16_b), ("atan2", DataFormat.Float16_b), ("add_int32", DataFormat.Int32),
                    ("mul_int32", DataFormat.Int32)):
    _register_binary(_name, _fmt)
