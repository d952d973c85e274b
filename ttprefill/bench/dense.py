"""Modeled time of the dense ops of a Qwen3.5 stack at one chunk length, from simulator runs.

Every op that is not the GDN core or attention (the projections, the norms, RoPE, the element-wise
ops, the final norm and the LM head of the last token) runs once per distinct shape in timing-only
mode (no arithmetic, all control flow, CB and NoC traffic and costs), and its modeled time counts
once per layer that has it: identical layers run identical programs, so they are timed once and
reused, as stated in the result. The GDN gated norm is timed as well but left out of the total (the
GDN layer core's programs, ops/gdn, include their own).

    dense_ops_bench(model="qwen3.5-9b", seq=8192, weight_format="bfp8") -> dict (JSON-ready)
    format_dense_ops(result) -> str
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.hw import CLOCK_HZ
from ttprefill.ops.linear.planner import DEFAULT_FIDELITY
from ttprefill.ops.linear.weight_formats import FORMATS as WEIGHT_FORMATS  # bf16, bfp8, bfp4: one for every projection
BF16 = DataFormat.Float16_b


@dataclass(frozen=True)
class DenseOp:
    name: str
    category: str  # matmul | norm | rope | eltwise
    count: int  # times the op runs in one chunk of the whole model
    run: Callable  # (device, reports) -> None, allocating and freeing its own tensors
    in_total: bool = True
    flops: int = 0  # matmul FLOPs of one run (2 tokens k n)


def _linear_op(tokens: int, k: int, n: int, fmt: DataFormat, fidelity: MathFidelity):
    from ttprefill.ops.linear.linear import DenseWeight, linear

    def run(device, reports):
        x = device.allocate((tokens, k), BF16)
        w = DenseWeight(device.allocate((k, n), fmt), k, n)
        try:
            device.free(linear(device, x, w, fidelity=fidelity, reports=reports))
        finally:
            device.free(x)
            w.free()
    return run


def _lm_head_op(k: int, vocab: int, fmt: DataFormat, fidelity: MathFidelity):
    from ttprefill.ops.linear.linear import ChunkedDenseWeight, linear_chunked

    def run(device, reports):
        x = device.allocate((1, k), BF16)
        w = ChunkedDenseWeight.allocate(device, k, vocab, fmt)
        try:
            for out in linear_chunked(device, x, w, fidelity=fidelity, reports=reports):
                device.free(out)
        finally:
            device.free(x)
            w.free()
    return run


def _norm_op(tokens: int, width: int, group_width: int, group_stride: int | None = None, gated: bool = False,
             last_tile_row_only: bool = False):
    import numpy as np

    from ttprefill.ops.norm import NormWeight, gated_rms_norm, rms_norm

    def run(device, reports):
        x = device.allocate((tokens, width), BF16)
        w = NormWeight.upload(device, np.zeros(group_width, np.float32), zero_centred=not gated)
        z = device.allocate((tokens, width), BF16) if gated else None
        try:
            if gated:
                out = gated_rms_norm(device, x, z, w, 1e-6, group_width=group_width, reports=reports)
            else:
                out = rms_norm(device, x, w, 1e-6, group_width=group_width, group_stride=group_stride,
                               last_tile_row_only=last_tile_row_only, reports=reports)
            device.free(out)
        finally:
            device.free(x)
            w.free()
            if z is not None:
                device.free(z)
    return run


def _rope_op(tokens: int, heads: int, head_dim: int, rotary_dim: int, theta: float):
    import numpy as np

    from ttprefill.ops.rope import RopeTables, apply_rope

    def run(device, reports):
        x = device.allocate((tokens, heads * head_dim), BF16)
        tables = RopeTables.upload(device, np.arange(tokens), rotary_dim, theta)
        try:
            apply_rope(device, x, tables, heads=heads, reports=reports)
        finally:
            tables.free()
            device.free(x)
    return run


def _swiglu_op(tokens: int, k: int, paired: int, fmt: DataFormat, fidelity: MathFidelity):
    from ttprefill.ops.linear.linear import DenseWeight
    from ttprefill.ops.linear.swiglu import linear_swiglu

    def run(device, reports):
        x = device.allocate((tokens, k), BF16)
        w = DenseWeight(device.allocate((k, paired), fmt), k, paired)
        try:
            device.free(linear_swiglu(device, x, w, device.allocate((tokens, paired // 2), BF16), fidelity=fidelity,
                                      reports=reports))
        finally:
            device.free(x)
            w.free()
    return run


def _eltwise_op(tokens: int, width: int, fn_name: str):
    from ttprefill.ops import eltwise

    fn = getattr(eltwise, fn_name)

    def run(device, reports):
        a, b = device.allocate((tokens, width), BF16), device.allocate((tokens, width), BF16)
        try:
            device.free(fn(device, a, b, reports=reports))
        finally:
            device.free(a)
            device.free(b)
    return run


def dense_ops(config, seq: int, weight_format: DataFormat,
              fidelity: MathFidelity = DEFAULT_FIDELITY) -> list[DenseOp]:
    """The dense ops of one prefill chunk of `seq` tokens through the whole stack, each with its count."""
    from ttprefill.ops.linear import projection_shapes

    T, h, L = seq, config.hidden_size, config.num_layers
    n_gdn, n_attn = len(config.gdn_layers), len(config.attention_layers)
    p = projection_shapes(config, T)
    hq, hkv, d = config.attn_num_heads, config.attn_num_kv_heads, config.attn_head_dim

    def lin(name):
        return _linear_op(T, *p[name], weight_format, fidelity)

    def fl(name, tokens=T):
        k, n = p[name]
        return 2 * tokens * k * n

    ops = [
        DenseOp("decoder_norm", "norm", 2 * L, _norm_op(T, h, h)),  # input and post-attention norms
        DenseOp("residual_add", "eltwise", 2 * L, _eltwise_op(T, h, "residual_add")),
        # gate and up in one program with their SwiGLU (ops/linear/swiglu.py); FLOPs of the paired weight
        DenseOp("mlp.gate_up_proj+swiglu", "matmul", L, _swiglu_op(T, *p["mlp.gate_up_proj"], weight_format, fidelity),
                flops=fl("mlp.gate_up_proj")),
        DenseOp("mlp.down_proj", "matmul", L, lin("mlp.down_proj"), flops=fl("mlp.down_proj")),
        DenseOp("linear_attn.in_proj_qkv", "matmul", n_gdn, lin("linear_attn.in_proj_qkv"),
                flops=fl("linear_attn.in_proj_qkv")),
        DenseOp("linear_attn.in_proj_zba", "matmul", n_gdn, lin("linear_attn.in_proj_zba"),
                flops=fl("linear_attn.in_proj_zba")),
        DenseOp("linear_attn.out_proj", "matmul", n_gdn, lin("linear_attn.out_proj"), flops=fl("linear_attn.out_proj")),
        DenseOp("linear_attn.gated_norm", "norm", n_gdn,
                _norm_op(T, config.gdn_value_dim, config.gdn_value_head_dim, gated=True), in_total=False),
        DenseOp("self_attn.qkv_proj", "matmul", n_attn, lin("self_attn.qkv_proj"), flops=fl("self_attn.qkv_proj")),
        DenseOp("self_attn.q_norm", "norm", n_attn, _norm_op(T, 2 * hq * d, d, 2 * d)),
        DenseOp("self_attn.k_norm", "norm", n_attn, _norm_op(T, hkv * d, d)),
        DenseOp("self_attn.rope_q", "rope", n_attn, _rope_op(T, hq, d, config.rotary_dim, config.rope_theta)),
        DenseOp("self_attn.rope_k", "rope", n_attn, _rope_op(T, hkv, d, config.rotary_dim, config.rope_theta)),
        DenseOp("self_attn.output_gate", "eltwise", n_attn, _eltwise_op(T, hq * d, "sigmoid_gate")),
        DenseOp("self_attn.o_proj", "matmul", n_attn, lin("self_attn.o_proj"), flops=fl("self_attn.o_proj")),
        DenseOp("final_norm (last token)", "norm", 1, _norm_op(T, h, h, last_tile_row_only=True)),
        DenseOp("lm_head (last token)", "matmul", 1, _lm_head_op(h, config.vocab_size, weight_format, fidelity),
                flops=fl("lm_head", 1)),
    ]
    return [op for op in ops if op.count]


def dense_ops_bench(model: str = "qwen3.5-9b", seq: int = 8192, weight_format: str = "bfp8",
                    costs: str = "central", matmul_fidelity: str = DEFAULT_FIDELITY.name) -> dict:
    """Time every dense op of one `seq`-token chunk of `model` on the simulator (timing-only).

    matmul_fidelity: the projections' math fidelity (HiFi2 default; LoFi halves the multiplier passes
    at about twice the error: tests/ops and the report state the accuracy of each)."""
    from ttprefill.device.sim_device import SimDevice, model_version
    from ttprefill.model.config import get_preset

    if weight_format not in WEIGHT_FORMATS:
        raise ValueError(f"weight_format {weight_format!r}: choose one of {sorted(WEIGHT_FORMATS)}")
    if matmul_fidelity not in MathFidelity.__members__:
        raise ValueError(f"matmul_fidelity {matmul_fidelity!r}: choose one of {list(MathFidelity.__members__)}")
    if seq < 1:
        raise ValueError(f"seq must be positive; got {seq}")
    config = get_preset(model)
    device = SimDevice(timing_only=True, costs=costs)
    t_start = time.perf_counter()
    by_op, by_category, matmul_flops = {}, {}, 0
    for op in dense_ops(config, seq, WEIGHT_FORMATS[weight_format], MathFidelity[matmul_fidelity]):
        reports = []
        t0 = time.perf_counter()
        op.run(device, reports)
        wall = time.perf_counter() - t0
        each = sum(r.cycles for r in reports) / CLOCK_HZ
        by_op[op.name] = {"category": op.category, "count": op.count, "programs": len(reports),
                          "modeled_s_each": each, "modeled_s": each * op.count, "in_total": op.in_total,
                          "sim_wall_s": round(wall, 2)}
        if op.in_total:
            by_category[op.category] = by_category.get(op.category, 0.0) + each * op.count
        matmul_flops += op.flops * op.count
    return {
        "model": model, "seq": seq, "weight_format": weight_format, "matmul_fidelity": matmul_fidelity,
        "costs": costs,
        "model_version": model_version(), "timing_only": True,
        "modeled_s": sum(by_category.values()), "by_category_modeled_s": by_category, "by_op": by_op,
        "matmul_flops": matmul_flops,
        "matmul_tflops_modeled": matmul_flops / by_category["matmul"] / 1e12 if by_category.get("matmul") else 0.0,
        "sim_wall_s": round(time.perf_counter() - t_start, 1),
        "note": ("modeled by the simulator's timing model; each op simulated once per distinct shape and counted "
                 "for every layer that runs it (identical layers run identical programs); GDN layer cores and "
                 "attention not included; linear_attn.gated_norm is an alternative to the GDN core's own norm "
                 "and is not in the total"),
    }


def format_dense_ops(result: dict) -> str:
    lines = [f"{result['model']}, {result['seq']} tokens, {result['weight_format']} weights "
             f"({result['matmul_fidelity']}), timing model "
             f"{result['model_version']} ({result['costs']}), modeled:"]
    for name, r in result["by_op"].items():
        mark = "" if r["in_total"] else "  (not in total)"
        lines.append(f"  {name:32s} {r['count']:4d} x {r['modeled_s_each'] * 1e3:8.3f} ms = {r['modeled_s'] * 1e3:9.2f} ms"
                     f"  [{r['programs']} program(s), sim {r['sim_wall_s']:.1f} s]{mark}")
    for cat, s in result["by_category_modeled_s"].items():
        lines.append(f"  {cat:10s} {s * 1e3:9.2f} ms")
    lines.append(f"  matmul rate {result['matmul_tflops_modeled']:.1f} TFLOP/s modeled")
    lines.append(f"  total dense ops {result['modeled_s'] * 1e3:.1f} ms modeled; simulator wall {result['sim_wall_s']} s")
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_dense_ops(dense_ops_bench()))
