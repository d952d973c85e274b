"""Representative norm programs for the checks against the real ttnn (tests/host; ops/registry.py)."""

from __future__ import annotations

from ttprefill.device.program import DataFormat, Program
from ttprefill.ops.registry import build_device, register

from .planner import WEIGHT_FORMAT, plan_norm
from .program import norm_program
from .shapes import TILE, NormShape


def _registered(shape: NormShape) -> Program:
    device = build_device()
    x = device.allocate((shape.tokens, shape.x_width), DataFormat.Float16_b)
    rows = device.allocate((TILE, shape.group_width), WEIGHT_FORMAT)
    y = device.allocate((shape.tokens, shape.out_width), DataFormat.Float16_b)
    z = device.allocate((shape.tokens, shape.out_width), DataFormat.Float16_b) if shape.gated else None
    return norm_program(plan_norm(shape), x, rows, y, z)


@register("norm/decoder_T256_h4096")
def _decoder() -> Program:
    return _registered(NormShape(256, 4096, 4096))


@register("norm/q_norm_T128_h16_d256_strided")
def _q_norm() -> Program:
    return _registered(NormShape(128, 16 * 2 * 256, 256, groups=16, group_stride=2 * 256))


@register("norm/gated_T128_hv32_v128")
def _gated() -> Program:
    return _registered(NormShape(128, 32 * 128, 128, groups=32, gated=True))


@register("norm/add_rmsnorm_T256_h4096")
def _add_norm() -> Program:
    from .add_norm import add_norm_program, plan_add_norm

    device = build_device()
    x, y, out = (device.allocate((256, 4096), DataFormat.Float16_b) for _ in range(3))
    rows = device.allocate((TILE, 4096), WEIGHT_FORMAT)
    return add_norm_program(plan_add_norm(256, 4096, 1e-6), x, y, rows, out)
