"""What each projection's math fidelity costs in accuracy, measured on the simulator (scripts/fidelity_accuracy).

Two parts:

1. Matmuls. For every K a Qwen3.5-9B projection has (one chip and its n300 share) and each weight format and
   fidelity, the simulated dense op (ops/linear, its full numerics: the weight as its bfp tiles hold it, the
   matrix unit's fidelity passes, bf16 partials between K blocks, a bf16 output) against fp64:
     total  against x @ W in fp64 with the weight as the checkpoint has it (what the model sees);
     arith  against x @ W_held in fp64, W_held the weight as the device holds it (what the fidelity and the
            accumulation cost, with the weight format's own rounding taken out).
   Each is reported as PCC, relative RMS error (rms(out - ref) / rms(ref)) and max |out - ref| / rms(ref)
   (a max relative error that does not blow up where ref crosses zero). x is bf16 in every case, as the
   device's activations are.

   Inputs (synthetic; no Qwen checkpoint is read): weights are Student-t (5 degrees of freedom) scaled to a
   standard deviation of 0.02, Qwen-like in scale with heavier tails than a Gaussian (an estimate: only
   the shape of a row's distribution matters to a bfp format, and the errors are scale-free); each
   projection's input is built the way the layer builds it:
     normed     residual rows with per-channel scales (log-normal, sigma 0.5) and 1 % outlier channels at 8x,
                RMS-normed, times a zero-centred norm weight (1 + N(0, 0.1)): gate/up, GDN and attention
                in-projections;
     swiglu     silu(x W_gate^T) * (x W_up^T) of normed rows: down_proj;
     gated      per-head (128) RMS-normed rows times silu(z), z ~ N(0, 1): the GDN out_proj's gated norm;
     attention  softmax-weighted averages of Gaussian values (scale 1 / sqrt(16) of a value's) times
                sigmoid(gate): attention's o_proj.

2. End to end: the tiny model's last-token logits (150 tokens, chunks of 64, every op on the simulated
   device, `Engine`) for each projection-fidelity setting against transformers' Qwen3_5ForCausalLM in fp64
   (when transformers is installed; the fp64 reference stack, which agrees with it to 1e-5, otherwise).
"""

from __future__ import annotations

import time

import numpy as np

TOKENS, COLUMNS = 64, 256  # rows and output columns of each simulated matmul (errors depend on K, not N)
HEAD_DIM_GDN = 128


def _projection_cases() -> list[dict]:
    """(role, K, input kind, chips) of each distinct 9B projection K, one chip and its n300 share."""
    from ttprefill.model.config import get_preset

    c = get_preset("qwen3.5-9b")
    h, inter = c.hidden_size, c.intermediate_size
    gdn_w, attn_w = c.gdn_num_v_heads * c.gdn_value_head_dim, c.attn_num_heads * c.attn_head_dim
    cases = [("mlp_gate_up, gdn_in, attention_in", h, "normed", 1),
             ("mlp_down", inter, "swiglu", 1), ("gdn_out", gdn_w, "gated", 1),
             ("attention_out", attn_w, "attention", 1),
             ("mlp_down", inter // 2, "swiglu", 2), ("gdn_out", gdn_w // 2, "gated", 2),
             ("attention_out", attn_w // 2, "attention", 2)]
    return [{"roles": r, "k": k, "input": kind, "chips": chips} for r, k, kind, chips in cases]


def qwen_like_weight(rng, n_out: int, k_in: int, std: float = 0.02) -> np.ndarray:
    t = rng.standard_t(5, size=(n_out, k_in))
    return (t * (std / np.sqrt(5 / 3))).astype(np.float32)  # t(5) has variance 5/3


def _rms_rows(x: np.ndarray, group: int | None = None) -> np.ndarray:
    shaped = x if group is None else x.reshape(x.shape[0], -1, group)
    normed = shaped / np.sqrt(np.mean(shaped ** 2, axis=-1, keepdims=True) + 1e-6)
    return normed.reshape(x.shape)


def realistic_input(rng, kind: str, tokens: int, k: int, hidden: int = 4096) -> np.ndarray:
    if kind == "normed":
        scales = np.exp(rng.normal(0.0, 0.5, k))
        scales[rng.choice(k, max(1, k // 100), replace=False)] *= 8.0
        rows = rng.standard_normal((tokens, k)) * scales
        return (_rms_rows(rows) * (1.0 + rng.normal(0.0, 0.1, k))).astype(np.float32)
    if kind == "swiglu":
        x = realistic_input(rng, "normed", tokens, hidden)
        gate = x @ qwen_like_weight(rng, k, hidden).T.astype(np.float64)
        up = x @ qwen_like_weight(rng, k, hidden).T.astype(np.float64)
        return (gate / (1.0 + np.exp(-gate)) * up).astype(np.float32)
    if kind == "gated":
        z = rng.standard_normal((tokens, k))
        return (_rms_rows(rng.standard_normal((tokens, k)), HEAD_DIM_GDN) * z / (1.0 + np.exp(-z))).astype(np.float32)
    if kind == "attention":
        values = rng.standard_normal((tokens, k, 16))
        weights = rng.dirichlet(np.ones(16), size=(tokens, k))
        gate = rng.standard_normal((tokens, k))
        return ((values * weights).sum(-1) / (1.0 + np.exp(-gate))).astype(np.float32)
    raise ValueError(f"unknown input kind {kind!r}; choose normed, swiglu, gated or attention")


def _metrics(ref: np.ndarray, out: np.ndarray) -> dict:
    from ttprefill.reference.metrics import pcc, rel_rms

    rms = float(np.sqrt(np.mean(ref ** 2)))
    return {"pcc": pcc(ref, out), "rel_rms": rel_rms(ref, out),
            "max_err_over_rms": float(np.max(np.abs(out.astype(np.float64) - ref)) / rms)}


def held(array: np.ndarray, fmt) -> np.ndarray:
    """The values the device holds for `array` uploaded in `fmt`, in fp64."""
    from ttprefill.device.formats import from_device_bytes, to_device_bytes

    return from_device_bytes(to_device_bytes(array, fmt), fmt, array.shape).astype(np.float64)


def matmul_accuracy(device, x: np.ndarray, w: np.ndarray, weight_format, fidelity) -> dict:
    """The simulated dense op x @ w^T against fp64 (module docstring: total and arith)."""
    from ttprefill.device.program import DataFormat
    from ttprefill.ops.linear import linear_host

    out = linear_host(device, x, w, weight_format=weight_format, fidelity=fidelity)
    xq = held(x, DataFormat.Float16_b)
    w_held = held(np.ascontiguousarray(w.T), weight_format)  # uploaded as W^T, as DenseWeight does
    return {"total": _metrics(xq @ w.T.astype(np.float64), out), "arith": _metrics(xq @ w_held, out)}


def matmul_study(fidelities=("LoFi", "HiFi2", "HiFi4"), formats=("bfp8", "bfp4"), seed: int = 0) -> list[dict]:
    from ttprefill.device.program import MathFidelity
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.ops.linear.weight_formats import FORMATS

    device = SimDevice()
    rows = []
    for case in _projection_cases():
        rng = np.random.default_rng([seed, case["k"], len(case["input"])])
        x = realistic_input(rng, case["input"], TOKENS, case["k"])
        w = qwen_like_weight(rng, COLUMNS, case["k"])
        for fmt in formats:
            for fid in fidelities:
                r = matmul_accuracy(device, x, w, FORMATS[fmt], MathFidelity[fid])
                rows.append({**case, "tokens": TOKENS, "columns": COLUMNS, "weight_format": fmt, "fidelity": fid, **r})
    return rows


def _hf_config(cfg) -> dict:
    return {"vocab_size": cfg.vocab_size, "hidden_size": cfg.hidden_size, "num_hidden_layers": cfg.num_layers,
            "layer_types": list(cfg.layer_types), "linear_num_key_heads": cfg.gdn_num_qk_heads,
            "linear_num_value_heads": cfg.gdn_num_v_heads, "linear_key_head_dim": cfg.gdn_key_head_dim,
            "linear_value_head_dim": cfg.gdn_value_head_dim, "linear_conv_kernel_dim": cfg.gdn_conv_kernel,
            "num_attention_heads": cfg.attn_num_heads, "num_key_value_heads": cfg.attn_num_kv_heads,
            "head_dim": cfg.attn_head_dim, "intermediate_size": cfg.intermediate_size,
            "rms_norm_eps": cfg.rms_norm_eps, "max_position_embeddings": cfg.max_position_embeddings,
            "tie_word_embeddings": cfg.tie_word_embeddings,
            "rope_parameters": {"rope_type": "default", "rope_theta": cfg.rope_theta,
                                "partial_rotary_factor": cfg.partial_rotary_factor}}


def oracle_logits(config, weights, tokens) -> tuple[np.ndarray, str]:
    """Last-token logits in fp64 from transformers, or from the reference stack when it is not installed."""
    import torch

    try:
        import transformers
    except ImportError:
        transformers = None
    if transformers is not None and hasattr(transformers, "Qwen3_5ForCausalLM"):
        model = transformers.Qwen3_5ForCausalLM(transformers.Qwen3_5TextConfig(**_hf_config(config))).eval()
        model.load_state_dict({k: torch.from_numpy(np.asarray(v, np.float32)) for k, v in weights.items()})
        model = model.to(torch.float64)
        with torch.no_grad():
            return model(input_ids=torch.tensor([list(tokens)])).logits[0, -1].numpy(), "transformers (fp64)"
    from ttprefill.model.reference_model import ReferenceModel

    ref = ReferenceModel(config, weights, dtype=torch.float64, gdn_chunk=64)
    return ref.forward(list(tokens), ref.new_state(), 0, last_only=True).numpy(), "reference stack (fp64)"


# Role settings over HiFi2 everywhere (so each names all it changes); "default" is EngineOptions'.
END_TO_END_SETTINGS = ("HiFi4", "HiFi2", "default", "attention_in=LoFi,attention_out=LoFi", "mlp_down=LoFi",
                       "mlp_gate_up=LoFi", "gdn_in=LoFi,gdn_out=LoFi", "mlp_gate_up=LoFi,mlp_down=LoFi", "LoFi")


def end_to_end_study(settings=END_TO_END_SETTINGS, tokens: int = 150, chunk: int = 64, seed: int = 5) -> dict:
    from ttprefill.engine import Engine
    from ttprefill.model.config import get_preset
    from ttprefill.model.weights import random_weights
    from ttprefill.ops.linear.fidelity import ProjectionFidelity
    from ttprefill.options import EngineOptions
    from ttprefill.reference.metrics import pcc, rel_rms

    config = get_preset("tiny")
    weights = random_weights(config, seed=seed)
    prompt = np.random.default_rng(8).integers(0, config.vocab_size, tokens).tolist()
    oracle, oracle_name = oracle_logits(config, weights, prompt)
    rows = []
    from ttprefill.device.program import MathFidelity

    over = ProjectionFidelity.uniform(MathFidelity.HiFi2)
    for spec in settings:
        fid = ProjectionFidelity() if spec == "default" else ProjectionFidelity.parse(spec, over)
        t0 = time.perf_counter()
        result = Engine(config, weights, backend="sim",
                        options=EngineOptions(chunk_tokens=chunk, matmul_fidelity=fid)).prefill(prompt)
        out = np.asarray(result.last_logits, np.float64)
        rows.append({"setting": spec, "fidelities": fid.describe(), "pcc": pcc(oracle, out),
                     "rel_rms": rel_rms(oracle, out), "argmax_agrees": bool(np.argmax(out) == np.argmax(oracle)),
                     "wall_s": time.perf_counter() - t0})
    return {"model": "tiny", "tokens": tokens, "chunk_tokens": chunk, "weights": f"random_weights(seed={seed})",
            "oracle": oracle_name, "rows": rows}


def format_study(result: dict) -> str:
    lines = []
    if result.get("matmuls"):
        lines += [f"Simulated projections vs fp64 ({TOKENS} tokens x {COLUMNS} columns each; module docstring for "
                  "the inputs). total: vs the checkpoint's weight; arith: vs the weight as held",
                  f"  {'roles':34s} {'K':>6s} chips fmt   fid   | total pcc  rel_rms  max/rms | "
                  "arith pcc  rel_rms  max/rms"]
    for r in result.get("matmuls", []):
        t, a = r["total"], r["arith"]
        lines.append(f"  {r['roles']:34s} {r['k']:6d} {r['chips']:5d} {r['weight_format']:5s} {r['fidelity']:5s} | "
                     f"{t['pcc']:.6f} {t['rel_rms']:8.4f} {t['max_err_over_rms']:8.4f} | "
                     f"{a['pcc']:.6f} {a['rel_rms']:8.4f} {a['max_err_over_rms']:8.4f}")
    e = result.get("end_to_end")
    if e:
        lines.append(f"End to end: {e['model']} model, {e['tokens']} tokens in chunks of {e['chunk_tokens']}, "
                     f"last-token logits vs {e['oracle']}")
        for r in e["rows"]:
            lines.append(f"  {r['setting']:40s} pcc {r['pcc']:.6f}  rel_rms {r['rel_rms']:.4f}  "
                         f"argmax {'agrees' if r['argmax_agrees'] else 'DIFFERS'}")
    return "\n".join(lines)
