"""Hugging Face transformers as the oracle: its Qwen3_5ForCausalLM (fp64, the reference PyTorch paths of
its GDN and conv) on the tiny model's weights against `ttprefill prefill --json` with every layer on the
simulated device, and against the torch reference stack. transformers is a test dependency (scripts/setup-env
installs it): the oracle always runs."""

from __future__ import annotations

import json

import numpy as np
import torch
import transformers

from ttprefill import cli
from ttprefill.model.config import get_preset
from ttprefill.model.reference_model import ReferenceModel
from ttprefill.model.weights import random_weights, save_safetensors
from ttprefill.reference.metrics import pcc, rel_rms

assert hasattr(transformers, "Qwen3_5ForCausalLM"), (
    f"transformers {transformers.__version__} has no Qwen3.5; scripts/setup-env installs a version that has")

TINY = get_preset("tiny")
WEIGHTS = random_weights(TINY, seed=5)


def _hf_config_dict(cfg) -> dict:
    return {"model_type": "qwen3_5_text", "vocab_size": cfg.vocab_size, "hidden_size": cfg.hidden_size,
            "num_hidden_layers": cfg.num_layers, "layer_types": list(cfg.layer_types),
            "linear_num_key_heads": cfg.gdn_num_qk_heads, "linear_num_value_heads": cfg.gdn_num_v_heads,
            "linear_key_head_dim": cfg.gdn_key_head_dim, "linear_value_head_dim": cfg.gdn_value_head_dim,
            "linear_conv_kernel_dim": cfg.gdn_conv_kernel, "num_attention_heads": cfg.attn_num_heads,
            "num_key_value_heads": cfg.attn_num_kv_heads, "head_dim": cfg.attn_head_dim,
            "intermediate_size": cfg.intermediate_size, "rms_norm_eps": cfg.rms_norm_eps,
            "max_position_embeddings": cfg.max_position_embeddings, "tie_word_embeddings": False,
            "rope_parameters": {"rope_type": "default", "rope_theta": cfg.rope_theta,
                                "partial_rotary_factor": cfg.partial_rotary_factor}}


def _hf_last_logits(tokens, weights=WEIGHTS) -> np.ndarray:
    """transformers' last-token logits in fp64 for the tiny model with `weights` (by default this module's)."""
    config = transformers.Qwen3_5TextConfig(**{k: v for k, v in _hf_config_dict(TINY).items() if k != "model_type"})
    model = transformers.Qwen3_5ForCausalLM(config).eval()
    model.load_state_dict({k: torch.from_numpy(np.asarray(v, np.float32)) for k, v in weights.items()})
    model = model.to(torch.float64)
    with torch.no_grad():
        return model(input_ids=torch.tensor([tokens])).logits[0, -1].numpy()



def against_transformers(tokens, logits, weights) -> dict:
    """Relative RMS error and PCC of last-token logits against transformers in fp64 (the tiny model, `weights`)."""
    oracle = _hf_last_logits(tokens, weights)
    return {"rel_rms": rel_rms(oracle, logits), "pcc": pcc(oracle, logits)}


def tiny_sim_engine(weights, options, mesh: tuple[int, int] = (1, 1)):
    """The tiny model with `weights` on the simulator under EngineOptions `options`: one chip, or a SimMesh."""
    from ttprefill.device.mesh import SimMesh
    from ttprefill.engine import Engine

    device = SimMesh(mesh) if mesh != (1, 1) else None
    return Engine(TINY, weights, backend="sim", options=options, device=device, model_key="tiny")

def write_tiny_model(tmp_path):
    """The tiny model as a checkpoint folder (config.json + safetensors), as `prefill --model DIR` reads it."""
    folder = tmp_path / "tiny-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(_hf_config_dict(TINY)))
    save_safetensors(WEIGHTS, folder)
    return folder


def test_device_prefill_and_torch_reference_match_transformers(tmp_path, capsys):
    folder = write_tiny_model(tmp_path)
    tokens = np.random.default_rng(8).integers(0, TINY.vocab_size, 150).tolist()
    (tmp_path / "tokens.txt").write_text(" ".join(map(str, tokens)))
    hf = _hf_last_logits(tokens)

    reference = ReferenceModel(TINY, WEIGHTS, dtype=torch.float64, gdn_chunk=64)
    ref = reference.forward(tokens, reference.new_state(), 0, last_only=True).numpy()
    assert rel_rms(hf, ref) <= 1e-5  # the same math in fp64: agreement to rounding

    code = cli.main(["prefill", "--model", str(folder), "--tokens", str(tmp_path / "tokens.txt"), "--json",
                     "--backend", "sim", "--chunk", "64"])
    out, err = capsys.readouterr()
    assert code == 0, err
    device = np.asarray(json.loads(out.strip().splitlines()[-1])["last_logits"])
    assert pcc(hf, device) >= 0.999 and rel_rms(hf, device) <= 0.03
    assert int(np.argmax(device)) == int(np.argmax(hf))
