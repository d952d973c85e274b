"""Representative projection programs for the checks against the real ttnn (tests/host; ops/registry.py):
the first row slab of a Qwen3.5-9B-shaped projection at 1k tokens, bfp8 and bf16 weights; the MLP's gate | up
projection with its SwiGLU (swiglu.py, our compute kernel) at 9B's n300 chip share and 27B's T3000 chip share
(a partial last core column), and at 9B's n300 share as tt-metal's Qwen3.5 demo runs it (bfp4 gate | up weights,
the bfp8 rows a bfp8 gather delivers, LoFi): the one program here whose circular buffers hold bfp4_b tiles."""

from __future__ import annotations

from ttprefill.device.program import DataFormat, Program
from ttprefill.ops.registry import build_device, register

from .planner import plan_linear
from .program import slab_program
from .shapes import LinearShape


def _registered(tokens: int, k: int, n: int, weight_format: DataFormat, first_slab: int = 0) -> Program:
    device = build_device()
    plan = plan_linear(LinearShape(tokens, k, n, weight_format))
    x = device.allocate((tokens, k), DataFormat.Float16_b)
    w = device.allocate((k, n), weight_format)
    out = device.allocate((tokens, n), DataFormat.Float16_b)
    first_row, rows = plan.slabs()[first_slab]
    return slab_program(device, x, w, out, plan, first_row, rows)


@register("linear/T1024_k4096_n4096_bfp8")
def _o_proj() -> Program:
    return _registered(1024, 4096, 4096, DataFormat.Bfp8_b)


@register("linear/T8192_k4096_n12288_bf16_second_slab")
def _mlp_gate_slab() -> Program:
    return _registered(8192, 4096, 12288, DataFormat.Float16_b, first_slab=1)


def _registered_swiglu(tokens: int, k: int, inter: int, weight_format: DataFormat,
                       x_format: DataFormat = DataFormat.Float16_b, **plan_options) -> Program:
    from .swiglu import paired_width, plan_swiglu, swiglu_programs

    device = build_device()
    plan = plan_swiglu(LinearShape(tokens, k, paired_width(inter), weight_format, in0_format=x_format), **plan_options)
    x = device.allocate((tokens, k), x_format)
    w = device.allocate((k, paired_width(inter)), weight_format)
    out = device.allocate((tokens, inter), DataFormat.Float16_b)
    return swiglu_programs(device, x, w, out, plan)[0]


@register("linear/swiglu_T2048_k4096_i6144_bfp8")
def _mlp_swiglu_9b_tp2() -> Program:
    return _registered_swiglu(2048, 4096, 6144, DataFormat.Bfp8_b)


@register("linear/swiglu_T1024_k5120_i2176_bfp8")
def _mlp_swiglu_27b_tp8() -> Program:
    return _registered_swiglu(1024, 5120, 2176, DataFormat.Bfp8_b)


@register("linear/swiglu_T2048_k4096_i6144_bfp4_lofi")
def _mlp_swiglu_9b_tp2_demo() -> Program:
    from ttprefill.device.program import MathFidelity

    return _registered_swiglu(2048, 4096, 6144, DataFormat.Bfp4_b, x_format=DataFormat.Bfp8_b,
                              fidelity=MathFidelity.LoFi)
