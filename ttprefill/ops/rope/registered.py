"""Representative RoPE programs for the checks against the real ttnn (tests/host; ops/registry.py)."""

from __future__ import annotations

from ttprefill.device.program import DataFormat, Program
from ttprefill.ops.registry import build_device, register

from .planner import plan_rope
from .program import TABLE_FORMAT, rope_program
from .shapes import RopeShape


@register("rope/T256_h16_d256_r64")
def _rope_q() -> Program:
    device = build_device()
    shape = RopeShape(256, 16, 256, 64)
    x = device.allocate((shape.tokens, shape.heads * shape.head_dim), DataFormat.Float16_b)
    cos = device.allocate((shape.tokens, shape.rotary_dim), TABLE_FORMAT)
    sin = device.allocate((shape.tokens, shape.rotary_dim), TABLE_FORMAT)
    return rope_program(plan_rope(shape), x, cos, sin)


@register("rope/T128_h4_d64_r16")
def _rope_sub_tile() -> Program:
    """A rotation inside the first tile (the tiny model's 16 of 64): the swapped-halves CB and tables of 32."""
    device = build_device()
    shape = RopeShape(128, 4, 64, 16)
    x = device.allocate((shape.tokens, shape.heads * shape.head_dim), DataFormat.Float16_b)
    cos = device.allocate((shape.tokens, shape.table_width), TABLE_FORMAT)
    sin = device.allocate((shape.tokens, shape.table_width), TABLE_FORMAT)
    return rope_program(plan_rope(shape), x, cos, sin)
