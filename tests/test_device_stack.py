"""The whole model on the device (model/device_stack.py) through the engine and `ttprefill prefill`, on the
simulator: last-token logits against the fp64 torch reference (ReferenceModel, the stack the HF oracle
checks), host traffic against what the spec allows (counted independently from tile sizes and by the
device's own byte counter), the prefix cache's cached run equal to its cold run, the memory plan's refusal."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from ttprefill import cli
from ttprefill.engine import Engine, EngineError, EngineOptions
from ttprefill.model.config import get_preset
from ttprefill.model.reference_model import ReferenceModel
from ttprefill.model.weights import random_weights, save_safetensors
from ttprefill.reference.metrics import pcc, rel_rms

TINY = get_preset("tiny")
WEIGHTS = random_weights(TINY, seed=5)
TILE = 32


def _reference_logits(tokens):
    model = ReferenceModel(TINY, WEIGHTS, dtype=torch.float64, gdn_chunk=64)
    return model.forward(list(tokens), model.new_state(), 0, last_only=True).numpy()


def _hf_config(cfg):
    return {"model_type": "qwen3_5_text", "vocab_size": cfg.vocab_size, "hidden_size": cfg.hidden_size,
            "num_hidden_layers": cfg.num_layers, "layer_types": list(cfg.layer_types),
            "linear_num_key_heads": cfg.gdn_num_qk_heads, "linear_num_value_heads": cfg.gdn_num_v_heads,
            "linear_key_head_dim": cfg.gdn_key_head_dim, "linear_value_head_dim": cfg.gdn_value_head_dim,
            "linear_conv_kernel_dim": cfg.gdn_conv_kernel, "num_attention_heads": cfg.attn_num_heads,
            "num_key_value_heads": cfg.attn_num_kv_heads, "head_dim": cfg.attn_head_dim,
            "rope_theta": cfg.rope_theta, "partial_rotary_factor": cfg.partial_rotary_factor,
            "intermediate_size": cfg.intermediate_size, "rms_norm_eps": cfg.rms_norm_eps,
            "max_position_embeddings": cfg.max_position_embeddings, "tie_word_embeddings": False}


def _tiles(rows, cols):
    return -(-rows // TILE) * -(-cols // TILE)


def test_prefill_cli_on_the_simulator_matches_the_torch_reference_and_reports_traffic(tmp_path, capsys):
    folder = tmp_path / "tiny-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(_hf_config(TINY)))
    save_safetensors(WEIGHTS, folder)
    tokens = np.random.default_rng(8).integers(0, TINY.vocab_size, 150).tolist()
    (tmp_path / "tokens.txt").write_text(" ".join(map(str, tokens)))
    outputs = {}
    for backend in ("sim", "torch"):
        code = cli.main(["prefill", "--model", str(folder), "--tokens", str(tmp_path / "tokens.txt"), "--json",
                         "--backend", backend, "--chunk", "64"])
        out, err = capsys.readouterr()
        assert code == 0, err
        outputs[backend] = json.loads(out.strip().splitlines()[-1])
    ref = _reference_logits(tokens)
    sim = np.asarray(outputs["sim"]["last_logits"])
    assert pcc(ref, sim) >= 0.999 and rel_rms(ref, sim) <= 0.03
    assert pcc(np.asarray(outputs["torch"]["last_logits"]), sim) >= 0.999
    assert outputs["sim"]["chunks"] == 3
    # Down per chunk: the embedding rows only (bf16, rows padded to whole 32-row tiles). The page table is
    # resident (its ids go into it as runtime args), the RoPE tables went down once when the engine started.
    H = TINY.hidden_size
    down = 0
    for start, end in ((0, 64), (64, 128), (128, 150)):
        down += -(-(end - start) // TILE) * TILE * H * 2
    assert outputs["sim"]["host_bytes_down"] == down
    # Up: the last token's logits row, once (the LM head runs on the last chunk only): vocab bf16 values in
    # row-major pages of 2 KB (tiny's 1024-word vocabulary is one LM head chunk).
    assert outputs["sim"]["host_bytes_up"] == -(-TINY.vocab_size * 2 // 2048) * 2048
    # GDN states (conv [3, C] bf16, recurrent [HV K, V] fp32) up at each checkpoint and down once at the start.
    per_state = len(TINY.gdn_layers) * (_tiles(3, TINY.gdn_conv_channels) * 2048
                                        + _tiles(TINY.gdn_num_v_heads * TINY.gdn_key_head_dim,
                                                 TINY.gdn_value_head_dim) * 4096)
    assert outputs["sim"]["checkpoint_bytes_down"] == per_state
    # Up: at the checkpoint on a chunk's end (128, the last whole block) in the checkpoints' reads (per GDN layer
    # the 3 conv rows, row-major bf16 in 2 KB pages of 1024 values, and the recurrent state), and the whole
    # state tensors at the prompt's end (the result carries them).
    rec = TINY.gdn_num_v_heads * TINY.gdn_key_head_dim * TINY.gdn_value_head_dim * 4
    at_block = len(TINY.gdn_layers) * (3 * -(-TINY.gdn_conv_channels // 1024) * 2048 + rec)
    assert outputs["sim"]["checkpoint_bytes_up"] == at_block + per_state
    assert outputs["torch"]["host_bytes_down"] == outputs["torch"]["host_bytes_up"] == 0


def test_every_byte_the_device_moves_is_in_the_result():
    eng = Engine(TINY, WEIGHTS, backend="sim", options=EngineOptions(chunk_tokens=64, checkpoint_every_blocks=2))
    device = eng.model.device
    tokens = np.random.default_rng(2).integers(0, TINY.vocab_size, 200).tolist()
    before = device.host_traffic.as_dict()
    result = eng.prefill(tokens)
    after = device.host_traffic.as_dict()
    moved = {d: sum(after[d].values()) - sum(before[d].values()) for d in after}
    assert moved["to_device"] == result.host_bytes_down + result.checkpoint_bytes_down
    assert moved["to_host"] == result.host_bytes_up + result.checkpoint_bytes_up
    assert pcc(_reference_logits(tokens), result.last_logits) >= 0.999


def test_rope_tables_are_resident_and_grow_when_a_chunk_reaches_past_them():
    """The engine's RoPE tables cover every position its K/V pages hold, uploaded once (fp32 cos and sin,
    tiny's 16 rotary dims in one 32-wide tile column); tables cut short are re-uploaded, counted as traffic,
    and the logits still match the reference."""
    eng = Engine(TINY, WEIGHTS, backend="sim", options=EngineOptions(chunk_tokens=64))
    model = eng.model
    capacity = model.kv[TINY.attention_layers[0]].num_pages * model.page_tokens
    assert model.setup.down["rope_tables"] == 2 * _tiles(capacity, TILE) * 4096
    tokens = np.random.default_rng(6).integers(0, TINY.vocab_size, 150).tolist()
    model._upload_rope(64)  # tables for positions 0..63 only: the second chunk grows them to 128, the third to 256
    result = eng.prefill(tokens)
    assert model.traffic.down["rope_tables"] == 2 * (_tiles(128, TILE) + _tiles(256, TILE)) * 4096
    down = sum(_tiles(end - start, TINY.hidden_size) * 2048 for start, end in ((0, 64), (64, 128), (128, 150)))
    assert result.host_bytes_down == down + model.traffic.down["rope_tables"]
    assert pcc(_reference_logits(tokens), result.last_logits) >= 0.999


def test_a_cached_run_equals_its_cold_run():
    """Chunks of 64 and blocks of 64: the warm run resumes at a block boundary, where the cold run also cuts
    a chunk, so both run the same programs on the same values from there (bit-identical logits)."""
    options = EngineOptions(chunk_tokens=64, block_tokens=64, checkpoint_every_blocks=1)
    rng = np.random.default_rng(12)
    prefix = rng.integers(0, TINY.vocab_size, 192).tolist()
    first, second = prefix + rng.integers(0, TINY.vocab_size, 20).tolist(), prefix + rng.integers(0, 1024, 40).tolist()
    warm = Engine(TINY, WEIGHTS, backend="sim", options=options)
    warm.prefill(first)
    cached = warm.prefill(second)
    assert cached.cached_tokens == 192
    cold = Engine(TINY, WEIGHTS, backend="sim", options=options).prefill(second)
    assert cold.cached_tokens == 0
    np.testing.assert_array_equal(cached.last_logits, cold.last_logits)
    assert cached.checkpoint_bytes_down > 0  # the hit's checkpoint went down once
    for i in TINY.gdn_layers:
        np.testing.assert_array_equal(cached.state.recurrent_states[i].numpy(), cold.state.recurrent_states[i].numpy())


def test_memory_plan_refuses_before_any_weight_is_read():
    config = get_preset("qwen3.5-9b")
    with pytest.raises(EngineError, match="does not fit.*weights .* GB.*bfp8 weights"):
        Engine(config, {}, backend="sim", options=EngineOptions(weight_format="bf16"))


def test_prefill_cli_refuses_a_model_that_does_not_fit(capsys, tmp_path):
    (tmp_path / "t.txt").write_text("1 2 3")
    code = cli.main(["prefill", "--model", "qwen3.5-9b", "--tokens", str(tmp_path / "t.txt"), "--weights", "bf16"])
    _, err = capsys.readouterr()
    assert code == 2 and "does not fit" in err and "Traceback" not in err


def test_requests_leave_no_device_memory_behind():
    """Weights and K/V pools are allocated once; a request's GDN states and a chunk's temporaries are freed
    when it finishes (or fails), so the device's DRAM in use returns to what the engine started with."""
    eng = Engine(TINY, WEIGHTS, backend="sim", options=EngineOptions(chunk_tokens=64))
    device = eng.model.device
    at_start = device.dram_bytes_in_use()
    rng = np.random.default_rng(4)
    for n in (70, 130):
        eng.prefill(rng.integers(0, TINY.vocab_size, n).tolist())
        assert device.dram_bytes_in_use() == at_start
    with pytest.raises(EngineError):
        eng.prefill([TINY.vocab_size])  # refused before any chunk runs
    assert device.dram_bytes_in_use() == at_start
    # a device fault in the middle of a request's second chunk
    calls, mlp_block = [], eng.model.runner.mlp_block

    def failing_mlp(*args):
        calls.append(1)
        if len(calls) == len(TINY.layer_types) + 2:
            raise RuntimeError("injected device fault")
        mlp_block(*args)

    eng.model.runner.mlp_block = failing_mlp
    with pytest.raises(RuntimeError, match="injected"):
        eng.prefill(rng.integers(0, TINY.vocab_size, 100).tolist())
    assert device.dram_bytes_in_use() == at_start
