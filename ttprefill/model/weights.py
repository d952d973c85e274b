"""Model weights: Hugging Face parameter names and shapes, random init, safetensors I/O.

Layout: the text decoder of Qwen3.5 (transformers' Qwen3_5TextModel / Qwen3_5ForCausalLM),
used for every config, Qwen3-Next-shaped ones included. All matrices are [out, in] like
torch.nn.Linear. Per layer i (C = 2*H*K + HV*V conv channels):

    model.layers.{i}.input_layernorm.weight            [hidden]          zero-centred: x_hat*(1+w)
    model.layers.{i}.post_attention_layernorm.weight   [hidden]          zero-centred
  GDN layers (layer_types[i] == "linear_attention"):
    model.layers.{i}.linear_attn.in_proj_qkv.weight    [C, hidden]       rows [q heads|k heads|v heads]
    model.layers.{i}.linear_attn.in_proj_z.weight      [HV*V, hidden]
    model.layers.{i}.linear_attn.in_proj_b.weight      [HV, hidden]      beta = sigmoid(b)
    model.layers.{i}.linear_attn.in_proj_a.weight      [HV, hidden]      g from a
    model.layers.{i}.linear_attn.conv1d.weight         [C, 1, kernel]    depthwise, no bias
    model.layers.{i}.linear_attn.A_log                 [HV]
    model.layers.{i}.linear_attn.dt_bias               [HV]
    model.layers.{i}.linear_attn.norm.weight           [V]               gated RMSNorm, plain w
    model.layers.{i}.linear_attn.out_proj.weight       [hidden, HV*V]
  attention layers ("full_attention"):
    model.layers.{i}.self_attn.q_proj.weight           [Hq*2*D, hidden]  per head [q | gate]
    model.layers.{i}.self_attn.k_proj.weight           [Hkv*D, hidden]
    model.layers.{i}.self_attn.v_proj.weight           [Hkv*D, hidden]
    model.layers.{i}.self_attn.o_proj.weight           [hidden, Hq*D]
    model.layers.{i}.self_attn.q_norm.weight           [D]               zero-centred
    model.layers.{i}.self_attn.k_norm.weight           [D]               zero-centred
  every layer (dense SiLU-gated MLP):
    model.layers.{i}.mlp.gate_proj.weight              [I, hidden]
    model.layers.{i}.mlp.up_proj.weight                [I, hidden]
    model.layers.{i}.mlp.down_proj.weight              [hidden, I]
  and model.embed_tokens.weight [vocab, hidden], model.norm.weight [hidden] (zero-centred),
  lm_head.weight [vocab, hidden] (absent when tie_word_embeddings).

Source: transformers' Qwen3.5 modeling and config code (in_proj_qkv / in_proj_z / in_proj_b /
in_proj_a; Qwen3-Next's attention, MLP and norms carry the same names). Loading also accepts
the multimodal Qwen3.5 checkpoints' "model.language_model." prefix and skips their vision tower
("model.visual.") and multi-token-prediction ("mtp.") tensors. Qwen3-Next checkpoints store
fused, head-interleaved in_proj_qkvz / in_proj_ba and an MoE FFN: not loadable here (clear error).
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np

from ttprefill.model.config import ModelConfig

DEFAULT_MAX_RANDOM_PARAMS = 300_000_000  # 1.2 GB of fp32: beyond this random init is a mistake

CHECKPOINT_PREFIX_ALIASES = {"model.language_model.": "model."}
IGNORED_CHECKPOINT_PREFIXES = ("model.visual.", "mtp.")
QWEN3_NEXT_FUSED_NAMES = ("linear_attn.in_proj_qkvz.", "linear_attn.in_proj_ba.", "mlp.experts.", "mlp.gate.weight")


class WeightsError(ValueError):
    """Weights that do not match the config: the message names the tensor."""


def layer_prefix(layer: int) -> str:
    return f"model.layers.{layer}."


def parameter_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter name of the layout above with its shape, in a fixed order."""
    hidden = config.hidden_size
    H_v, V = config.gdn_num_v_heads, config.gdn_value_head_dim
    Hq, Hkv, D = config.attn_num_heads, config.attn_num_kv_heads, config.attn_head_dim
    inter = config.intermediate_size
    shapes: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (config.vocab_size, hidden)}
    for i in range(config.num_layers):
        p = layer_prefix(i)
        shapes[p + "input_layernorm.weight"] = (hidden,)
        if config.is_attention_layer(i):
            a = p + "self_attn."
            shapes[a + "q_proj.weight"] = (Hq * 2 * D, hidden)
            shapes[a + "k_proj.weight"] = (Hkv * D, hidden)
            shapes[a + "v_proj.weight"] = (Hkv * D, hidden)
            shapes[a + "o_proj.weight"] = (hidden, Hq * D)
            shapes[a + "q_norm.weight"] = (D,)
            shapes[a + "k_norm.weight"] = (D,)
        else:
            g = p + "linear_attn."
            shapes[g + "in_proj_qkv.weight"] = (config.gdn_conv_channels, hidden)
            shapes[g + "in_proj_z.weight"] = (config.gdn_value_dim, hidden)
            shapes[g + "in_proj_b.weight"] = (H_v, hidden)
            shapes[g + "in_proj_a.weight"] = (H_v, hidden)
            shapes[g + "conv1d.weight"] = (config.gdn_conv_channels, 1, config.gdn_conv_kernel)
            shapes[g + "A_log"] = (H_v,)
            shapes[g + "dt_bias"] = (H_v,)
            shapes[g + "norm.weight"] = (V,)
            shapes[g + "out_proj.weight"] = (hidden, config.gdn_value_dim)
        shapes[p + "post_attention_layernorm.weight"] = (hidden,)
        shapes[p + "mlp.gate_proj.weight"] = (inter, hidden)
        shapes[p + "mlp.up_proj.weight"] = (inter, hidden)
        shapes[p + "mlp.down_proj.weight"] = (hidden, inter)
    shapes["model.norm.weight"] = (hidden,)
    if not config.tie_word_embeddings:
        shapes["lm_head.weight"] = (config.vocab_size, hidden)
    return shapes


def parameter_count(config: ModelConfig) -> int:
    return sum(int(np.prod(shape)) for shape in parameter_shapes(config).values())


# ---------------------------------------------------------------------------------------------
# Random weights
# ---------------------------------------------------------------------------------------------


def _random_tensor(name: str, shape, config: ModelConfig, rng: np.random.Generator) -> np.ndarray:
    """One parameter, scaled so activations stay O(1) through the stack.

    Linear maps get std 1/sqrt(fan_in) (unit-variance in, unit-variance out); the projections
    that write into the residual stream are further divided by sqrt(2 * layers) so the stream
    does not grow with depth. Zero-centred norm weights are small noise around 0 (scale 1 + w),
    so a missing "1 +" shows up as a large error. Decay rates A = exp(A_log) span 0.02..1,
    giving per-token decays from barely-forgetting to strong.
    """
    residual_scale = 1.0 / np.sqrt(2.0 * config.num_layers)
    if name == "model.embed_tokens.weight":
        return rng.standard_normal(shape)
    if name.endswith("linear_attn.norm.weight"):
        return 1.0 + 0.1 * rng.standard_normal(shape)
    if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
        return 0.1 * rng.standard_normal(shape)
    if name.endswith("A_log"):
        return np.log(rng.uniform(0.02, 1.0, shape))
    if name.endswith("dt_bias"):
        return 0.5 * rng.standard_normal(shape)
    if name.endswith("conv1d.weight"):
        return rng.standard_normal(shape) / np.sqrt(shape[-1])
    fan_in = shape[-1]
    w = rng.standard_normal(shape) / np.sqrt(fan_in)
    if name.endswith(("out_proj.weight", "o_proj.weight", "down_proj.weight")):
        w *= residual_scale
    return w


def random_weights(config: ModelConfig, seed: int, max_params: int = DEFAULT_MAX_RANDOM_PARAMS) -> dict[str, np.ndarray]:
    """Deterministic random fp32 weights for config (same seed, same bytes on any machine).

    Each tensor has its own generator seeded by (seed, crc32(name)), so adding a layer or
    changing the vocab leaves every other tensor unchanged.
    """
    shapes = parameter_shapes(config)
    total = sum(int(np.prod(s)) for s in shapes.values())
    if total > max_params:
        raise WeightsError(
            f"{config.name} has {total:,} parameters ({total * 4 / 1e9:.1f} GB in fp32); random "
            f"weights are meant for small configs. Pass max_params={total} if you really want them."
        )
    weights = {}
    for name, shape in shapes.items():
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        weights[name] = _random_tensor(name, shape, config, rng).astype(np.float32)
    return weights


# ---------------------------------------------------------------------------------------------
# safetensors I/O
# ---------------------------------------------------------------------------------------------


def save_safetensors(weights: dict[str, np.ndarray], path) -> Path:
    """Write weights to one .safetensors file (a folder path gets model.safetensors inside)."""
    from safetensors.numpy import save_file

    path = Path(path)
    if path.suffix != ".safetensors":
        path.mkdir(parents=True, exist_ok=True)
        path = path / "model.safetensors"
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for name, value in weights.items():
        if not isinstance(value, np.ndarray):
            raise WeightsError(f"tensor {name!r} is a {type(value).__name__}; save numpy arrays")
        arrays[name] = np.ascontiguousarray(value)
    save_file(arrays, str(path), metadata={"format": "np", "layout": "ttprefill/qwen3.5-text"})
    return path


def _read_bf16_as_f32(path: Path, names: list[str]) -> dict[str, np.ndarray]:
    """numpy has no bfloat16: read the raw 16-bit words and widen them to fp32 exactly."""
    with open(path, "rb") as f:
        header_len = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(header_len))
    data_start = 8 + header_len
    out = {}
    for name in names:
        info = header[name]
        begin, end = info["data_offsets"]
        raw = np.fromfile(path, dtype="<u2", count=(end - begin) // 2, offset=data_start + begin)
        out[name] = (raw.astype(np.uint32) << 16).view(np.float32).reshape(info["shape"])
    return out


def _read_safetensors_file(path: Path) -> dict[str, np.ndarray]:
    from safetensors import safe_open

    tensors, bf16_names = {}, []
    try:
        with safe_open(str(path), framework="np") as f:
            for name in f.keys():
                if f.get_slice(name).get_dtype() == "BF16":
                    bf16_names.append(name)
                else:
                    tensors[name] = f.get_tensor(name)
        tensors.update(_read_bf16_as_f32(path, bf16_names))
    except WeightsError:
        raise
    except Exception as e:  # safetensors raises its own error types (and OSError / ValueError) for bad files
        raise WeightsError(f"{path}: not a readable safetensors file ({type(e).__name__}: {e}); "
                           "re-download or re-export it") from e
    return tensors


def _canonical_name(name: str) -> str | None:
    """Map a checkpoint name onto the layout above; None for tensors ttprefill does not use."""
    if name.startswith(IGNORED_CHECKPOINT_PREFIXES):
        return None
    for alias, canonical in CHECKPOINT_PREFIX_ALIASES.items():
        if name.startswith(alias):
            return canonical + name[len(alias):]
    return name


def load_weights(path, config: ModelConfig, dtype=np.float32) -> dict[str, np.ndarray]:
    """Load and validate the weights for config from a folder of .safetensors files (or one file).

    Every expected tensor must be present with its exact shape; anything left over is an
    error too (a sign of the wrong config). Returns {name: array of dtype}.
    """
    path = Path(path)
    files = sorted(path.glob("*.safetensors")) if path.is_dir() else [path]
    if not files or not all(f.is_file() for f in files):
        raise WeightsError(f"no .safetensors files at {path}")
    found: dict[str, np.ndarray] = {}
    for file in files:
        for name, value in _read_safetensors_file(file).items():
            canonical = _canonical_name(name)
            if canonical is None:
                continue
            if canonical in found:
                raise WeightsError(f"tensor {canonical!r} appears twice (again in {file.name})")
            found[canonical] = value

    fused = sorted(n for n in found if any(marker in n for marker in QWEN3_NEXT_FUSED_NAMES))
    if fused:
        raise WeightsError(
            f"{path} holds Qwen3-Next fused/MoE tensors (e.g. {fused[0]!r}); ttprefill loads the "
            "Qwen3.5 text layout (separate in_proj_qkv/z/b/a, dense MLP) only"
        )

    expected = parameter_shapes(config)
    if config.tie_word_embeddings:
        found.pop("lm_head.weight", None)  # some tied checkpoints store a copy anyway
    missing = [n for n in expected if n not in found]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise WeightsError(f"{path}: missing tensor(s) {missing[:5]}{more} for config {config.name}")
    unexpected = sorted(n for n in found if n not in expected)
    if unexpected:
        more = f" and {len(unexpected) - 5} more" if len(unexpected) > 5 else ""
        raise WeightsError(f"{path}: unexpected tensor(s) {unexpected[:5]}{more} for config {config.name}")
    weights = {}
    for name, shape in expected.items():
        got = tuple(found[name].shape)
        if got != shape:
            raise WeightsError(f"tensor {name!r}: expected shape {shape}, got {got} (config {config.name})")
        value = np.asarray(found[name], dtype=dtype)
        if not np.all(np.isfinite(value)):
            bad = int(np.size(value) - np.count_nonzero(np.isfinite(value)))
            raise WeightsError(f"tensor {name!r} holds {bad} NaN/Inf value(s): the checkpoint is corrupt "
                               "(a prefill would give NaN logits); re-export it")
        weights[name] = value
    return weights
