"""The dense-op bench covers the whole stack: its op list (no simulation here) holds every projection
and norm of the checkpoint's weight list (model/weights.py) exactly as often as the model runs them."""

from __future__ import annotations

from ttprefill.bench.dense import dense_ops
from ttprefill.device.program import DataFormat
from ttprefill.model.config import get_preset
from ttprefill.model.weights import parameter_shapes


def test_dense_ops_cover_every_projection_and_norm():
    cfg = get_preset("qwen3.5-9b")
    T = 8192
    ops = dense_ops(cfg, T, DataFormat.Bfp8_b)
    shapes = parameter_shapes(cfg)
    expected_flops = 0
    for name, shape in shapes.items():
        if "_proj" in name and len(shape) == 2:  # every q/k/v/o, in/out and MLP projection
            expected_flops += 2 * T * shape[0] * shape[1]
    expected_flops += 2 * 1 * cfg.hidden_size * cfg.vocab_size  # LM head, last token only (tied or not)
    assert sum(op.flops * op.count for op in ops if op.category == "matmul") == expected_flops

    norm_weights = [n for n in shapes if n.endswith("norm.weight")]
    counted = {op.name: op.count for op in ops if op.category == "norm"}
    assert counted["decoder_norm"] == sum("layernorm" in n for n in norm_weights)
    assert counted["self_attn.q_norm"] == sum("q_norm" in n for n in norm_weights)
    assert counted["self_attn.k_norm"] == sum("k_norm" in n for n in norm_weights)
    assert counted["linear_attn.gated_norm"] == sum("linear_attn.norm" in n for n in norm_weights)
    assert counted["final_norm (last token)"] == 1 and "model.norm.weight" in shapes
    # one residual add per mixer and per MLP, one SiLU-gate per MLP, one output gate per attention layer
    counts = {op.name: op.count for op in ops}
    assert counts["residual_add"] == 2 * cfg.num_layers
    assert counts["mlp.silu_mul"] == cfg.num_layers
    assert counts["self_attn.output_gate"] == len(cfg.attention_layers)
