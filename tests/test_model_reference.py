"""Model config, HF config reader, weights I/O, and the torch reference of the whole stack."""

import json
from dataclasses import replace
from functools import partial

import numpy as np
import pytest
import torch

from ttprefill import reference as ref
from ttprefill.model import torch_ops
from ttprefill.model.config import HFConfigError, ModelConfig, from_hf_config, get_preset
from ttprefill.model.reference_model import ModelState, ReferenceModel
from ttprefill.model.weights import (
    WeightsError,
    load_weights,
    parameter_count,
    parameter_shapes,
    random_weights,
    save_safetensors,
)

TINY = get_preset("tiny")


@pytest.fixture(scope="module")
def tiny_weights():
    return random_weights(TINY, seed=0)


@pytest.fixture(scope="module")
def tokens():
    return np.random.default_rng(1).integers(0, TINY.vocab_size, 130)


# ---- config ---------------------------------------------------------------------------------


def test_tiny_preset():
    c = TINY
    assert (c.num_layers, c.hidden_size, c.vocab_size, c.intermediate_size) == (4, 256, 1024, 512)
    assert c.layer_types == ("linear_attention",) * 3 + ("full_attention",)
    assert (c.gdn_num_qk_heads, c.gdn_num_v_heads, c.gdn_key_head_dim, c.gdn_value_head_dim) == (2, 4, 64, 64)
    assert (c.attn_num_heads, c.attn_num_kv_heads, c.attn_head_dim) == (4, 2, 64)
    assert c.max_position_embeddings == 32768 and c.rotary_dim == 16


def test_qwen35_27b_preset_matches_gdn_md():
    c = get_preset("qwen3.5-27b")
    assert c.num_layers == 64 and len(c.gdn_layers) == 48 and len(c.attention_layers) == 16
    assert c.attention_layers[:3] == (3, 7, 11)
    assert (c.hidden_size, c.intermediate_size) == (5120, 17408)
    assert c.gdn_conv_channels == 2 * 16 * 128 + 48 * 128
    assert (c.attn_num_heads, c.attn_num_kv_heads, c.attn_head_dim, c.rotary_dim) == (24, 4, 256, 64)
    # GDN.md: a checkpoint of every GDN layer's recurrent state is 151 MB in fp32.
    checkpoint_bytes = len(c.gdn_layers) * c.gdn_num_v_heads * c.gdn_key_head_dim * c.gdn_value_head_dim * 4
    assert round(checkpoint_bytes / 1e6) == 151
    assert 26.0e9 < parameter_count(c) < 27.9e9  # the text decoder of a "27B" model
    assert not c.real_ffn_is_moe


def test_qwen3_next_preset_matches_gdn_md():
    c = get_preset("qwen3-next-80b")
    assert c.num_layers == 48 and len(c.gdn_layers) == 36 and len(c.attention_layers) == 12
    assert (c.gdn_num_qk_heads, c.gdn_num_v_heads, c.attn_num_heads, c.attn_num_kv_heads) == (16, 32, 16, 2)
    assert c.hidden_size == 2048 and c.real_ffn_is_moe


def test_config_validation_errors():
    with pytest.raises(ValueError, match="unknown model preset"):
        get_preset("qwen4")
    with pytest.raises(ValueError, match="multiple of q/k heads"):
        TINY.with_changes(gdn_num_v_heads=3)
    with pytest.raises(ValueError, match="layer_types has 3 entries"):
        TINY.with_changes(layer_types=TINY.layer_types[:3])


QWEN35_27B_HF = {
    "architectures": ["Qwen3_5ForConditionalGeneration"],
    "model_type": "qwen3_5",
    "tie_word_embeddings": False,
    "text_config": {
        "model_type": "qwen3_5_text",
        "attn_output_gate": True,
        "full_attention_interval": 4,
        "head_dim": 256,
        "hidden_act": "silu",
        "hidden_size": 5120,
        "intermediate_size": 17408,
        "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 128,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 48,
        "linear_value_head_dim": 128,
        "max_position_embeddings": 262144,
        "num_attention_heads": 24,
        "num_hidden_layers": 64,
        "num_key_value_heads": 4,
        "rms_norm_eps": 1e-6,
        "rope_parameters": {
            "mrope_interleaved": True,
            "mrope_section": [11, 11, 10],
            "partial_rotary_factor": 0.25,
            "rope_theta": 10000000,
            "rope_type": "default",
        },
        "vocab_size": 248320,
    },
    "vision_config": {"depth": 27},
}

QWEN3_NEXT_HF = {
    "architectures": ["Qwen3NextForCausalLM"],
    "model_type": "qwen3_next",
    "hidden_size": 2048,
    "intermediate_size": 5120,
    "num_hidden_layers": 48,
    "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"] * 12,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "num_experts": 512,
    "num_experts_per_tok": 10,
    "moe_intermediate_size": 512,
    "rope_theta": 10000000,
    "partial_rotary_factor": 0.25,
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 262144,
    "vocab_size": 151936,
    "tie_word_embeddings": False,
}


def test_hf_reader_qwen35_from_file_and_folder(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(QWEN35_27B_HF))
    for source in (tmp_path / "config.json", tmp_path):
        got = from_hf_config(source)
        assert got.with_changes(name="x") == get_preset("qwen3.5-27b").with_changes(name="x")


def test_hf_reader_qwen3_next_from_dict():
    got = from_hf_config(QWEN3_NEXT_HF)
    assert got.with_changes(name="x") == get_preset("qwen3-next-80b").with_changes(name="x")


@pytest.mark.parametrize(
    "change,message",
    [
        ({"linear_num_key_heads": None}, "'linear_num_key_heads' is missing"),
        ({"rope_theta": None, "partial_rotary_factor": None}, "'rope_theta' is missing"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, "'rope_scaling'"),
        ({"model_type": "llama"}, "unsupported model_type 'llama'"),
        ({"layer_types": ["sliding_attention"] * 48}, "unsupported kind"),
        ({"layer_types": ["full_attention"] * 47}, "47 entries for 48 layers"),
        ({"attention_bias": True}, "attention_bias"),
        ({"hidden_act": "gelu"}, "hidden_act"),
    ],
)
def test_hf_reader_errors_name_the_key(change, message):
    cfg = {k: v for k, v in QWEN3_NEXT_HF.items()}
    for key, value in change.items():
        if value is None:
            cfg.pop(key)
        else:
            cfg[key] = value
    with pytest.raises(HFConfigError, match=message):
        from_hf_config(cfg)


def test_hf_reader_missing_file(tmp_path):
    with pytest.raises(HFConfigError, match="no Hugging Face config"):
        from_hf_config(tmp_path)


# ---- weights --------------------------------------------------------------------------------


def test_parameter_layout_names():
    shapes = parameter_shapes(TINY)
    assert shapes["model.layers.0.linear_attn.in_proj_qkv.weight"] == (2 * 2 * 64 + 4 * 64, 256)
    assert shapes["model.layers.0.linear_attn.conv1d.weight"] == (512, 1, 4)
    assert shapes["model.layers.3.self_attn.q_proj.weight"] == (4 * 2 * 64, 256)
    assert "model.layers.3.linear_attn.A_log" not in shapes and "model.layers.0.self_attn.o_proj.weight" not in shapes
    assert "lm_head.weight" in shapes
    assert "lm_head.weight" not in parameter_shapes(TINY.with_changes(tie_word_embeddings=True))


def test_random_weights_are_deterministic(tiny_weights):
    again = random_weights(TINY, seed=0)
    other = random_weights(TINY, seed=1)
    assert all(np.array_equal(tiny_weights[n], again[n]) for n in tiny_weights)
    assert not np.array_equal(tiny_weights["model.norm.weight"], other["model.norm.weight"])
    assert all(w.dtype == np.float32 for w in tiny_weights.values())


def test_random_weights_refuse_huge_configs():
    with pytest.raises(WeightsError, match="parameters"):
        random_weights(get_preset("qwen3.5-27b"), seed=0)


def test_safetensors_round_trip(tmp_path, tiny_weights):
    save_safetensors(tiny_weights, tmp_path)
    loaded = load_weights(tmp_path, TINY)
    assert set(loaded) == set(tiny_weights)
    assert all(np.array_equal(loaded[n], tiny_weights[n]) for n in tiny_weights)


def test_load_multimodal_prefix_sharded_and_bf16(tmp_path, tiny_weights):
    import safetensors.torch

    names = sorted(tiny_weights)
    renamed = {n.replace("model.", "model.language_model.", 1) if n.startswith("model.") else n: tiny_weights[n]
               for n in names}
    half = len(names) // 2
    shard_a = {n: torch.from_numpy(renamed[n]).to(torch.bfloat16) for n in list(renamed)[:half]}
    shard_b = {n: torch.from_numpy(renamed[n]) for n in list(renamed)[half:]}
    shard_b["model.visual.patch_embed.weight"] = torch.zeros(2, 2)
    shard_b["mtp.fc.weight"] = torch.zeros(2, 2)
    safetensors.torch.save_file(shard_a, str(tmp_path / "model-00001-of-00002.safetensors"))
    safetensors.torch.save_file(shard_b, str(tmp_path / "model-00002-of-00002.safetensors"))
    loaded = load_weights(tmp_path, TINY)
    for n, original in renamed.items():
        canonical = n.replace("model.language_model.", "model.", 1)
        expect = shard_a[n].float().numpy() if n in shard_a else original
        assert np.array_equal(loaded[canonical], expect), canonical


def test_wrong_shape_error_names_tensor_and_shapes(tmp_path, tiny_weights):
    bad = dict(tiny_weights)
    bad["model.layers.1.linear_attn.A_log"] = np.zeros(5, dtype=np.float32)
    save_safetensors(bad, tmp_path / "w.safetensors")
    with pytest.raises(WeightsError) as err:
        load_weights(tmp_path / "w.safetensors", TINY)
    assert "model.layers.1.linear_attn.A_log" in str(err.value)
    assert "expected shape (4,), got (5,)" in str(err.value)


def test_missing_unexpected_and_fused_tensors_are_named(tmp_path, tiny_weights):
    missing = {n: w for n, w in tiny_weights.items() if n != "model.norm.weight"}
    save_safetensors(missing, tmp_path / "a" / "w.safetensors")
    with pytest.raises(WeightsError, match="missing tensor.*model.norm.weight"):
        load_weights(tmp_path / "a", TINY)
    extra = dict(tiny_weights, **{"model.layers.0.mlp.extra.weight": np.zeros(1, np.float32)})
    save_safetensors(extra, tmp_path / "b" / "w.safetensors")
    with pytest.raises(WeightsError, match="unexpected tensor.*mlp.extra"):
        load_weights(tmp_path / "b", TINY)
    fused = dict(tiny_weights, **{"model.layers.0.linear_attn.in_proj_qkvz.weight": np.zeros(1, np.float32)})
    save_safetensors(fused, tmp_path / "c" / "w.safetensors")
    with pytest.raises(WeightsError, match="Qwen3-Next fused"):
        load_weights(tmp_path / "c", TINY)


# ---- torch pieces against the numpy references ------------------------------------------------


def _torch(*arrays):
    return [torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in arrays]


@pytest.mark.parametrize("chunk", [None, 16])
def test_torch_gdn_core_matches_numpy_reference(chunk):
    rng = np.random.default_rng(2)
    H, HV, K, V, T = 2, 4, 16, 8, 45
    C = 2 * H * K + HV * V
    p = ref.GdnLayerParams(H, HV, K, V, rng.standard_normal((C, 4)) * 0.5, np.log(rng.uniform(0.05, 1, HV)),
                           rng.standard_normal(HV), 1 + 0.1 * rng.standard_normal(V))
    qkv, z = rng.standard_normal((T, C)), rng.standard_normal((T, HV * V))
    a, b = rng.standard_normal((T, HV)), rng.standard_normal((T, HV))
    conv0, state0 = rng.standard_normal((3, C)), 0.3 * rng.standard_normal((HV, K, V))
    y_np, conv_np, state_np = ref.gdn_layer_core(qkv, z, a, b, p, conv0, state0, chunk)
    scan = torch_ops.gdn_scan_recurrent if chunk is None else partial(torch_ops.gdn_scan_chunked, chunk=chunk)
    tp = replace(p, **dict(zip(("conv_weight", "A_log", "dt_bias", "norm_weight"),
                               _torch(p.conv_weight, p.A_log, p.dt_bias, p.norm_weight))))
    y, conv, state = torch_ops.gdn_layer_core(*_torch(qkv, z, a, b), tp, *_torch(conv0, state0), scan)
    assert np.allclose(y.numpy(), y_np, rtol=1e-10, atol=1e-12)
    assert np.array_equal(conv.numpy(), conv_np)
    assert np.allclose(state.numpy(), state_np, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("adversarial", [None, ref.ADVERSARIAL_KINDS])
def test_torch_chunked_scan_matches_numpy_recurrent(adversarial):
    d = ref.gdn_inputs(100, 2, 4, 16, 8, 0.1, np.random.default_rng(3), adversarial=adversarial)
    o_np, s_np = ref.gdn_recurrent(d["q"], d["k"], d["v"], d["g"], d["beta"], d["initial_state"])
    o, s = torch_ops.gdn_scan_chunked(*_torch(d["q"], d["k"], d["v"], d["g"], d["beta"], d["initial_state"]),
                                      chunk=32)
    assert np.allclose(o.numpy(), o_np, rtol=1e-10, atol=1e-12)
    assert np.allclose(s.numpy(), s_np, rtol=1e-10, atol=1e-12)


def test_torch_attention_matches_numpy_reference():
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((7, 4, 16)), rng.standard_normal((20, 2, 16)), rng.standard_normal((20, 2, 16))
    out = torch_ops.causal_attention(*_torch(q, k, v), 13, 0.25)
    assert np.allclose(out.numpy(), ref.causal_attention(q, k, v, 13, scale=0.25), rtol=1e-12, atol=1e-13)


def test_partial_rope_is_relative_and_leaves_the_rest():
    rng = np.random.default_rng(5)
    D, rd = 64, 16
    q, k = _torch(rng.standard_normal((1, 1, D)), rng.standard_normal((1, 1, D)))

    def rotated_dot(pq, pk):
        cq, sq = torch_ops.rope_cos_sin(torch.tensor([pq]), rd, 10000.0, torch.float64)
        ck, sk = torch_ops.rope_cos_sin(torch.tensor([pk]), rd, 10000.0, torch.float64)
        rq, rk = torch_ops.apply_partial_rope(q, cq, sq), torch_ops.apply_partial_rope(k, ck, sk)
        assert torch.equal(rq[..., rd:], q[..., rd:])
        return float((rq * rk).sum())

    assert rotated_dot(5, 2) == pytest.approx(rotated_dot(105, 102), rel=1e-12)
    assert rotated_dot(5, 2) != pytest.approx(rotated_dot(5, 3), rel=1e-3)
    cos, sin = torch_ops.rope_cos_sin(torch.tensor([0]), rd, 10000.0, torch.float64)
    assert torch.equal(torch_ops.apply_partial_rope(q, cos, sin), q)  # position 0 is the identity


# ---- the whole stack ------------------------------------------------------------------------


def prefill(model, tokens, cuts):
    state = model.new_state()
    bounds = [0, *cuts, len(tokens)]
    logits = [model.forward(tokens[a:b], state, a) for a, b in zip(bounds[:-1], bounds[1:])]
    return torch.cat(logits), state


CUTS = [(1, 3, 40, 64, 65, 129), (50,), (2, 100)]


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.float64, 1e-9)], ids=["fp32", "fp64"])
def test_prefill_in_pieces_equals_one_shot(tiny_weights, tokens, dtype, tol):
    model = ReferenceModel(TINY, tiny_weights, dtype=dtype, gdn_chunk=16)
    whole, whole_state = prefill(model, tokens, ())
    assert whole.shape == (len(tokens), TINY.vocab_size) and whole.dtype == dtype
    for cuts in CUTS:
        pieces, state = prefill(model, tokens, cuts)
        assert (pieces - whole).abs().max().item() <= tol * max(1.0, whole.abs().max().item()), cuts
        assert state.num_tokens == len(tokens)
        for i in TINY.gdn_layers:
            assert (state.recurrent_states[i] - whole_state.recurrent_states[i]).abs().max().item() <= tol
        for i in TINY.attention_layers:
            assert state.keys[i].shape == (len(tokens), TINY.attn_num_kv_heads, TINY.attn_head_dim)


def test_recurrent_and_chunked_models_agree(tiny_weights, tokens):
    chunked, _ = prefill(ReferenceModel(TINY, tiny_weights, dtype=torch.float64, gdn_chunk=32), tokens, ())
    recurrent, _ = prefill(ReferenceModel(TINY, tiny_weights, dtype=torch.float64, gdn_chunk=None), tokens, ())
    assert (chunked - recurrent).abs().max().item() < 1e-10


def test_device_hooks_receive_the_documented_arguments(tiny_weights, tokens):
    # Plug the numpy references in through the hooks: same logits as the torch defaults.
    def numpy_scan(q, k, v, g, beta, state):
        o, s, _ = ref.gdn_chunked(q.numpy(), k.numpy(), v.numpy(), g.numpy(), beta.numpy(), 64, state.numpy())
        return torch.from_numpy(o), torch.from_numpy(s)

    def numpy_attention(q, k, v, p0, scale):
        return torch.from_numpy(ref.causal_attention(q.numpy(), k.numpy(), v.numpy(), p0, scale=scale))

    hooked = ReferenceModel(TINY, tiny_weights, dtype=torch.float64, gdn_scan=numpy_scan, attention=numpy_attention)
    plain = ReferenceModel(TINY, tiny_weights, dtype=torch.float64)
    got, _ = prefill(hooked, tokens[:70], (33,))
    want, _ = prefill(plain, tokens[:70], ())
    assert (got - want).abs().max().item() < 1e-10


def test_logits_are_order_one_and_depend_on_early_tokens(tiny_weights, tokens):
    model = ReferenceModel(TINY, tiny_weights)
    logits, _ = prefill(model, tokens, ())
    assert torch.isfinite(logits).all() and 0.3 < logits.std().item() < 3.0
    changed = tokens.copy()
    changed[0] = (changed[0] + 1) % TINY.vocab_size
    last_changed = model.forward(changed, model.new_state(), 0, last_only=True)
    assert last_changed.shape == (TINY.vocab_size,)
    assert (last_changed - logits[-1]).abs().max().item() > 1e-3


def test_cloned_state_serves_as_a_prefix_checkpoint(tiny_weights, tokens):
    model = ReferenceModel(TINY, tiny_weights, dtype=torch.float64)
    state = model.new_state()
    model.forward(tokens[:64], state, 0)
    checkpoint = state.clone()
    model.forward(tokens[64:100], state, 64)  # must not disturb the checkpoint
    resumed = model.forward(tokens[64:], checkpoint, 64, last_only=True)
    full = model.forward(tokens, model.new_state(), 0, last_only=True)
    assert (resumed - full).abs().max().item() < 1e-9


def test_forward_rejects_bad_positions_and_tokens(tiny_weights):
    model = ReferenceModel(TINY, tiny_weights)
    state = model.new_state()
    with pytest.raises(ValueError, match="must start there"):
        model.forward([1, 2], state, 5)
    with pytest.raises(ValueError, match="token ids"):
        model.forward([TINY.vocab_size], state, 0)
    short = ReferenceModel(TINY.with_changes(max_position_embeddings=4), tiny_weights)
    with pytest.raises(ValueError, match="max_position_embeddings"):
        short.forward([1, 2, 3, 4, 5], short.new_state(), 0)
    assert isinstance(ModelState.empty(TINY), ModelState)
    assert isinstance(TINY, ModelConfig)


def numpy_stack_logits(cfg, w, tokens):
    """The whole stack once more, in fp64 numpy straight from GDN.md, on the numpy references."""
    eps = cfg.rms_norm_eps

    def norm(x, weight):  # zero-centred RMSNorm
        return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps) * (1.0 + weight)

    def rope(x, positions):  # rotate pairs (d, d + rd/2) of the first rd dims by pos * theta^(-2d/rd)
        rd, out = cfg.rotary_dim, x.copy()
        for d in range(rd // 2):
            angle = positions * cfg.rope_theta ** (-2.0 * d / rd)
            c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
            x1, x2 = x[:, :, d], x[:, :, d + rd // 2]
            out[:, :, d], out[:, :, d + rd // 2] = x1 * c - x2 * s, x2 * c + x1 * s
        return out

    W = {n: a.astype(np.float64) for n, a in w.items()}
    T = len(tokens)
    x = W["model.embed_tokens.weight"][tokens]
    for i in range(cfg.num_layers):
        p = f"model.layers.{i}."
        h = norm(x, W[p + "input_layernorm.weight"])
        if cfg.is_attention_layer(i):
            a = p + "self_attn."
            Hq, Hkv, D = cfg.attn_num_heads, cfg.attn_num_kv_heads, cfg.attn_head_dim
            qg = (h @ W[a + "q_proj.weight"].T).reshape(T, Hq, 2 * D)
            q, gate = norm(qg[:, :, :D], W[a + "q_norm.weight"]), qg[:, :, D:]
            k = norm((h @ W[a + "k_proj.weight"].T).reshape(T, Hkv, D), W[a + "k_norm.weight"])
            v = (h @ W[a + "v_proj.weight"].T).reshape(T, Hkv, D)
            pos = np.arange(T, dtype=np.float64)
            o = ref.causal_attention(rope(q, pos), rope(k, pos), v, 0, gate=gate)
            mixed = o.reshape(T, Hq * D) @ W[a + "o_proj.weight"].T
        else:
            g = p + "linear_attn."
            params = ref.GdnLayerParams(cfg.gdn_num_qk_heads, cfg.gdn_num_v_heads, cfg.gdn_key_head_dim,
                                        cfg.gdn_value_head_dim, W[g + "conv1d.weight"][:, 0, :], W[g + "A_log"],
                                        W[g + "dt_bias"], W[g + "norm.weight"], eps)
            y, _, _ = ref.gdn_layer_core(h @ W[g + "in_proj_qkv.weight"].T, h @ W[g + "in_proj_z.weight"].T,
                                         h @ W[g + "in_proj_a.weight"].T, h @ W[g + "in_proj_b.weight"].T,
                                         params, None, None, None)
            mixed = y @ W[g + "out_proj.weight"].T
        x = x + mixed
        h = norm(x, W[p + "post_attention_layernorm.weight"])
        up = h @ W[p + "mlp.up_proj.weight"].T
        gate_act = h @ W[p + "mlp.gate_proj.weight"].T
        x = x + (gate_act / (1 + np.exp(-gate_act)) * up) @ W[p + "mlp.down_proj.weight"].T
    return norm(x, W["model.norm.weight"]) @ W["lm_head.weight"].T


def test_torch_model_matches_numpy_stack(tiny_weights, tokens):
    want = numpy_stack_logits(TINY, tiny_weights, tokens[:40])
    got, _ = prefill(ReferenceModel(TINY, tiny_weights, dtype=torch.float64, gdn_chunk=16), tokens[:40], (17,))
    assert np.allclose(got.numpy(), want, rtol=1e-9, atol=1e-9)
    got32, _ = prefill(ReferenceModel(TINY, tiny_weights), tokens[:40], ())
    assert ref.rel_rms(want, got32.numpy()) < 1e-5
