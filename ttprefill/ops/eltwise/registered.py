"""Representative element-wise programs for the checks against the real ttnn (tests/host; ops/registry.py)."""

from __future__ import annotations

from ttprefill.device.program import DataFormat, Program
from ttprefill.ops.registry import build_device, register

from .program import binary_program


def _registered(shape, op: str, **acts) -> Program:
    device = build_device()
    a, b, out = (device.allocate(shape, DataFormat.Float16_b) for _ in range(3))
    return binary_program(a, b, out, op, **acts)


@register("eltwise/silu_mul_T256_i12288")
def _silu_mul() -> Program:
    return _registered((256, 12288), "mul", lhs="silu")


@register("eltwise/sigmoid_gate_T256_4096")
def _sigmoid_gate() -> Program:
    return _registered((256, 4096), "mul", rhs="sigmoid")


@register("eltwise/residual_add_T256_4096")
def _residual_add() -> Program:
    return _registered((256, 4096), "add")
