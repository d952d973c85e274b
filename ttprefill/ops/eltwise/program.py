"""binary_ng's element-wise program with an SFPU activation on either operand.

Built on the plain-factory mirror (ops/upstream/binary.py: reader_interleaved_no_bcast.cpp,
eltwise_binary_no_bcast.cpp, writer_interleaved_no_bcast.cpp). What the factory adds for an operand
activation, mirrored here from binary_ng's program factory and its utilities at tt-metal 0000d49ebfd8:
  * the define PROCESS_{LHS,RHS}_ACTIVATIONS(i) = the activation's init and call on DST tile i
    (add_activation_defines), plus the op family's SFPU_OP_*_INCLUDE (update_macro_defines); the
    compute kernel then copies each operand tile into DST, applies it and packs it into an
    intermediate CB before the FPU op (eltwise_utils.hpp, PREPROCESS);
  * that intermediate CB: c_3 for the LHS, c_4 for the RHS, one tile in the operand's format (an FPU
    op whose activation is not an exp keeps the operand format).
The activation strings are the non-approximate forms of the wheel's api/compute/compute_kernel_api.h.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.program import CircularBuffer, Program, Role
from ttprefill.hw import compute_grid
from ttprefill.ops.upstream.binary import binary_ng_program

CB_LHS_ACTIVATED, CB_RHS_ACTIVATED = 3, 4


@dataclass(frozen=True)
class Activation:
    name: str
    process: str  # the define's value: init and call on DST tile i
    include: str  # SFPU_OP_<include>_INCLUDE


ACTIVATIONS = {
    "silu": Activation("silu", "silu_tile_init();silu_tile(i);", "COMPUTE_KERNEL_API"),
    "sigmoid": Activation("sigmoid", "sigmoid_tile_init();sigmoid_tile(i);", "COMPUTE_KERNEL_API"),
}


def binary_program(a, b, out, op: str, *, lhs: str | None = None, rhs: str | None = None,
                   grid: tuple[int, int] | None = None, name: str | None = None) -> Program:
    """out = act_lhs(a) <op> act_rhs(b) for equal-shape tiled DRAM tensors; op add / sub / mul."""
    for which, act in (("lhs", lhs), ("rhs", rhs)):
        if act is not None and act not in ACTIVATIONS:
            raise ValueError(f"{which} activation {act!r} is not one of {sorted(ACTIVATIONS)}")
    if a.shape != out.shape or b.shape != out.shape:
        raise ValueError(f"element-wise operands must have the output's shape {out.shape}; got {a.shape} and {b.shape}")
    program = binary_ng_program(a, b, out, op, grid=grid if grid is not None else compute_grid())
    compute = next(k for k in program.kernels if k.role is Role.COMPUTE)
    extra_cbs = []
    for operand, act, cb, tensor in (("LHS", lhs, CB_LHS_ACTIVATED, a), ("RHS", rhs, CB_RHS_ACTIVATED, b)):
        if act is None:
            continue
        activation = ACTIVATIONS[act]
        compute.defines[f"PROCESS_{operand}_ACTIVATIONS(i)"] = activation.process
        compute.defines[f"SFPU_OP_{activation.include}_INCLUDE"] = "1"
        extra_cbs.append(CircularBuffer(cb, tensor.data_format, tensor.page_size, 1, compute.cores))
    program.circular_buffers = list(program.circular_buffers) + extra_cbs
    acts = "".join(f"_{x}" for x in (lhs, rhs) if x)
    program.name = name or f"eltwise_{op}{acts}"
    program.inputs, program.outputs = {"a": a, "b": b}, {"out": out}
    return program
