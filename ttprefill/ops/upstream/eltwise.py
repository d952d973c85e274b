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


OPS: dict[str, UnaryOp] = {
    op.name: op
    for op in (
        UnaryOp("exp", "EXP", "exp_tile_init<0u>();", "exp_tile<0u>({idst});", np.exp),
        UnaryOp("gelu", "GELU", "gelu_tile_init<0u>();", "gelu_tile<0u>({idst});",
                lambda x: 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))),
        UnaryOp("gelu_approx", "GELU", "gelu_tile_init<1u>();", "gelu_tile<1u>({idst});",
                lambda x: 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))),
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
    fp32 DST follows the factory's rule by default: on for Float32 and 32-bit integer inputs."""
    if fp32_dest_acc_en is None:
        fp32_dest_acc_en = src.data_format in (DataFormat.Float32, DataFormat.Int32, DataFormat.UInt32)
    name = "upstream_unary_" + "_".join(op.name for op in chain)
    return unary_interleaved_program(src, dst, grid=grid, defines=block_defines(chain, src.data_format),
                                     fp32_dest_acc_en=fp32_dest_acc_en, name=name)


def sample_input(op: UnaryOp, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Inputs in the op's checked range, bf16-representable."""
    from ttprefill.device.formats import round_to_bf16

    x = np.random.default_rng(seed).uniform(op.low, op.high, shape).astype(np.float32)
    return round_to_bf16(x)


def run_unary(device, chain: list[UnaryOp], x: np.ndarray, fmt: DataFormat = DataFormat.Float16_b,
              grid: tuple[int, int] = (1, 1)):
    """Upload x, run the program, return (output, run report)."""
    src = device.upload(x, fmt)
    dst = device.allocate(x.shape, fmt)
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
