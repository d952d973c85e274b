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
        # every q/k/v/o, in/out and MLP projection (9B: b and a have 32 columns, a whole tile, and the MLP's
        # 12288 are whole tiles: no padding)
        if "_proj" in name and len(shape) == 2:
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
    # one residual add per mixer and per MLP, one gate | up projection with its SwiGLU per MLP (no separate
    # silu_mul), one output gate per attention layer
    counts = {op.name: op.count for op in ops}
    assert counts["residual_add"] == 2 * cfg.num_layers
    assert counts["mlp.gate_up_proj+swiglu"] == cfg.num_layers and "mlp.silu_mul" not in counts
    assert counts["self_attn.output_gate"] == len(cfg.attention_layers)


def test_the_gdn_and_attention_input_projections_are_the_stacks_merged_ones():
    """As the device stack runs them: one z|b|a projection a GDN layer (b and a each padded to a whole tile
    column) and one q|k|v projection an attention layer. Qwen3.5-27B's figures written out: hidden 5120, 48 GDN
    v heads of 128 (b and a: 48 columns each, padded to 64), 24 attention q heads of 256 (query and output gate)
    over 4 kv heads; 48 GDN and 16 attention layers."""
    from ttprefill.ops.linear import projection_shapes

    cfg, T = get_preset("qwen3.5-27b"), 2048
    shapes = projection_shapes(cfg, T)
    assert shapes["linear_attn.in_proj_zba"] == (5120, 48 * 128 + 64 + 64)
    assert shapes["self_attn.qkv_proj"] == (5120, 24 * 2 * 256 + 2 * 4 * 256)
    for separate in ("in_proj_z", "in_proj_b", "in_proj_a"):
        assert f"linear_attn.{separate}" not in shapes
    for separate in ("q_proj", "k_proj", "v_proj"):
        assert f"self_attn.{separate}" not in shapes
    # the MLP's gate and up: one paired weight of 2 x 17408 columns (whole tiles already), one program a layer
    assert shapes["mlp.gate_up_proj"] == (5120, 2 * 17408) and "mlp.gate_proj" not in shapes
    ops = {op.name: op for op in dense_ops(cfg, T, DataFormat.Bfp8_b)}
    zba, qkv = ops["linear_attn.in_proj_zba"], ops["self_attn.qkv_proj"]
    assert (zba.count, zba.flops) == (48, 2 * T * 5120 * 6272)
    assert (qkv.count, qkv.flops) == (16, 2 * T * 5120 * 14336)
    assert not [name for name in ops if name.startswith(("linear_attn.in_proj_b", "self_attn.k_proj"))]
    mlp = ops["mlp.gate_up_proj+swiglu"]
    assert (mlp.count, mlp.flops) == (64, 2 * T * 5120 * 2 * 17408)
