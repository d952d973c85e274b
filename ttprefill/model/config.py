"""Model configuration: the shapes of a hybrid Gated-DeltaNet / attention stack.

Presets (numbers from shared/GDN.md and the published Hugging Face configs):
    tiny            4 layers (3 GDN + 1 attention), hidden 256: tests and the demo
    qwen3.5-27b     64 layers (48 GDN + 16 attention), hidden 5120, dense FFN 17408
    qwen3-next-80b  48 layers (36 GDN + 12 attention), hidden 2048

FFN scope: ttprefill models the dense SiLU-gated MLP only. Qwen3-Next-80B-A3B (and the
Qwen3.5 MoE variants) use a mixture-of-experts FFN, which is out of scope; for those, the
config keeps the layer shapes that matter for prefill (GDN, attention, hidden size) and puts a
dense MLP of `intermediate_size` in the FFN's place. `real_ffn_is_moe` records that the
stand-in differs from the real model, so nobody compares its logits with the real model's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

GDN_LAYER = "linear_attention"
ATTENTION_LAYER = "full_attention"
LAYER_KINDS = (GDN_LAYER, ATTENTION_LAYER)


def hybrid_layer_types(num_layers: int, full_attention_interval: int = 4) -> tuple[str, ...]:
    """Layer i is full attention when (i + 1) % interval == 0, else GDN."""
    if full_attention_interval < 1:
        raise ValueError(f"full_attention_interval must be >= 1; got {full_attention_interval}")
    return tuple(
        ATTENTION_LAYER if (i + 1) % full_attention_interval == 0 else GDN_LAYER
        for i in range(num_layers)
    )


@dataclass(frozen=True)
class ModelConfig:
    name: str
    vocab_size: int
    hidden_size: int
    num_layers: int
    layer_types: tuple[str, ...]  # one of LAYER_KINDS per layer
    # Gated DeltaNet layers
    gdn_num_qk_heads: int  # H
    gdn_num_v_heads: int  # HV; value head j reads q/k head j // (HV // H)
    gdn_key_head_dim: int  # K
    gdn_value_head_dim: int  # V
    gdn_conv_kernel: int
    # full-attention layers
    attn_num_heads: int
    attn_num_kv_heads: int
    attn_head_dim: int
    partial_rotary_factor: float  # RoPE acts on the first factor * head_dim dims
    rope_theta: float
    # dense SiLU-gated MLP and the rest
    intermediate_size: int
    rms_norm_eps: float = 1e-6
    max_position_embeddings: int = 32768
    tie_word_embeddings: bool = False
    real_ffn_is_moe: bool = False  # True: the real model's FFN is MoE, replaced by a dense MLP

    def __post_init__(self):
        if len(self.layer_types) != self.num_layers:
            raise ValueError(
                f"{self.name}: layer_types has {len(self.layer_types)} entries for {self.num_layers} layers"
            )
        unknown = sorted(set(self.layer_types) - set(LAYER_KINDS))
        if unknown:
            raise ValueError(f"{self.name}: unsupported layer type(s) {unknown}; supported: {LAYER_KINDS}")
        positive = (
            "vocab_size hidden_size num_layers gdn_num_qk_heads gdn_num_v_heads gdn_key_head_dim "
            "gdn_value_head_dim gdn_conv_kernel attn_num_heads attn_num_kv_heads attn_head_dim "
            "intermediate_size max_position_embeddings"
        ).split()
        for field in positive:
            if getattr(self, field) < 1:
                raise ValueError(f"{self.name}: {field} must be positive; got {getattr(self, field)}")
        if self.gdn_num_v_heads % self.gdn_num_qk_heads != 0:
            raise ValueError(
                f"{self.name}: GDN value heads ({self.gdn_num_v_heads}) must be a multiple of "
                f"q/k heads ({self.gdn_num_qk_heads})"
            )
        if self.attn_num_heads % self.attn_num_kv_heads != 0:
            raise ValueError(
                f"{self.name}: attention heads ({self.attn_num_heads}) must be a multiple of "
                f"kv heads ({self.attn_num_kv_heads})"
            )
        if not 0.0 < self.partial_rotary_factor <= 1.0:
            raise ValueError(f"{self.name}: partial_rotary_factor must be in (0, 1]; got {self.partial_rotary_factor}")
        if self.rotary_dim % 2 != 0 or self.rotary_dim == 0:
            raise ValueError(
                f"{self.name}: rotary dims = partial_rotary_factor * head_dim = {self.rotary_dim} must be even and > 0"
            )

    # ---- derived sizes -------------------------------------------------------------------
    @property
    def gdn_key_dim(self) -> int:
        """All q (or k) channels of a GDN layer: H * K."""
        return self.gdn_num_qk_heads * self.gdn_key_head_dim

    @property
    def gdn_value_dim(self) -> int:
        """All v (or z) channels of a GDN layer: HV * V."""
        return self.gdn_num_v_heads * self.gdn_value_head_dim

    @property
    def gdn_conv_channels(self) -> int:
        """Channels that go through the causal conv: q, k and v (2 * H * K + HV * V)."""
        return 2 * self.gdn_key_dim + self.gdn_value_dim

    @property
    def gdn_conv_state_len(self) -> int:
        """Pre-conv rows carried between prefill pieces: kernel - 1."""
        return self.gdn_conv_kernel - 1

    @property
    def gdn_dims(self):
        """The GDN layers' head layout as the device ops take it (ttprefill.ops.gdn.GdnDims); raises
        GdnShapeError, naming the limit, for a layout the device kernels do not support."""
        from ttprefill.ops.gdn import GdnDims

        return GdnDims(self.gdn_num_qk_heads, self.gdn_num_v_heads, self.gdn_key_head_dim, self.gdn_value_head_dim)

    @property
    def rotary_dim(self) -> int:
        return int(self.attn_head_dim * self.partial_rotary_factor)

    def is_attention_layer(self, layer: int) -> bool:
        return self.layer_types[layer] == ATTENTION_LAYER

    @property
    def gdn_layers(self) -> tuple[int, ...]:
        return tuple(i for i, kind in enumerate(self.layer_types) if kind == GDN_LAYER)

    @property
    def attention_layers(self) -> tuple[int, ...]:
        return tuple(i for i, kind in enumerate(self.layer_types) if kind == ATTENTION_LAYER)

    def with_changes(self, **changes) -> "ModelConfig":
        return replace(self, **changes)


def _tiny() -> ModelConfig:
    return ModelConfig(
        name="tiny",
        vocab_size=1024,
        hidden_size=256,
        num_layers=4,
        layer_types=hybrid_layer_types(4),
        gdn_num_qk_heads=2,
        gdn_num_v_heads=4,
        gdn_key_head_dim=64,
        gdn_value_head_dim=64,
        gdn_conv_kernel=4,
        attn_num_heads=4,
        attn_num_kv_heads=2,
        attn_head_dim=64,
        partial_rotary_factor=0.25,
        rope_theta=10000.0,
        intermediate_size=512,
        max_position_embeddings=32768,
    )


def _qwen35_27b() -> ModelConfig:
    return ModelConfig(
        name="qwen3.5-27b",
        vocab_size=248320,
        hidden_size=5120,
        num_layers=64,
        layer_types=hybrid_layer_types(64),
        gdn_num_qk_heads=16,
        gdn_num_v_heads=48,
        gdn_key_head_dim=128,
        gdn_value_head_dim=128,
        gdn_conv_kernel=4,
        attn_num_heads=24,
        attn_num_kv_heads=4,
        attn_head_dim=256,
        partial_rotary_factor=0.25,
        rope_theta=10_000_000.0,
        intermediate_size=17408,
        max_position_embeddings=262144,
    )


def _qwen35_9b() -> ModelConfig:
    """Qwen3.5-9B's text stack (tt-metal models/demos/blackhole/qwen36/README-N300-9B.md): the shape
    of the published N300 TTFT figures the timing model is compared with."""
    return ModelConfig(
        name="qwen3.5-9b",
        vocab_size=248320,
        hidden_size=4096,
        num_layers=32,
        layer_types=hybrid_layer_types(32),
        gdn_num_qk_heads=16,
        gdn_num_v_heads=32,
        gdn_key_head_dim=128,
        gdn_value_head_dim=128,
        gdn_conv_kernel=4,
        attn_num_heads=16,
        attn_num_kv_heads=4,
        attn_head_dim=256,
        partial_rotary_factor=0.25,
        rope_theta=10_000_000.0,
        intermediate_size=12288,
        max_position_embeddings=262144,
    )


def _qwen3_next_80b() -> ModelConfig:
    return ModelConfig(
        name="qwen3-next-80b",
        vocab_size=151936,
        hidden_size=2048,
        num_layers=48,
        layer_types=hybrid_layer_types(48),
        gdn_num_qk_heads=16,
        gdn_num_v_heads=32,
        gdn_key_head_dim=128,
        gdn_value_head_dim=128,
        gdn_conv_kernel=4,
        attn_num_heads=16,
        attn_num_kv_heads=2,
        attn_head_dim=256,
        partial_rotary_factor=0.25,
        rope_theta=10_000_000.0,
        intermediate_size=5120,  # the HF config's dense intermediate_size; the real FFN is MoE
        max_position_embeddings=262144,
        real_ffn_is_moe=True,
    )


PRESETS = {
    "tiny": _tiny,
    "qwen3.5-27b": _qwen35_27b,
    "qwen3.5-9b": _qwen35_9b,
    "qwen3-next-80b": _qwen3_next_80b,
}


def get_preset(name: str) -> ModelConfig:
    try:
        return PRESETS[name]()
    except KeyError:
        raise ValueError(f"unknown model preset {name!r}; choose one of {sorted(PRESETS)}") from None


# ---------------------------------------------------------------------------------------------
# Hugging Face config.json reader (Qwen3-Next and Qwen3.5 families)
# ---------------------------------------------------------------------------------------------

DENSE_TEXT_MODEL_TYPES = ("qwen3_5_text",)
MOE_TEXT_MODEL_TYPES = ("qwen3_next", "qwen3_5_moe_text")
WRAPPER_MODEL_TYPES = ("qwen3_5", "qwen3_5_moe")  # multimodal wrappers holding a text_config


class HFConfigError(ValueError):
    """A Hugging Face config that ttprefill cannot represent; the message says which key."""


def _read_config_source(path_or_dict) -> tuple[dict, str]:
    if isinstance(path_or_dict, dict):
        return path_or_dict, "<dict>"
    path = Path(path_or_dict)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise HFConfigError(f"no Hugging Face config at {path}: pass config.json or its folder")
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise HFConfigError(f"{path}: not a JSON file ({e}); expected a Hugging Face config.json") from e
    if not isinstance(raw, dict):
        raise HFConfigError(f"{path}: holds a JSON {type(raw).__name__}, expected an object of config keys")
    return raw, str(path)


def from_hf_config(path_or_dict) -> ModelConfig:
    """Build a ModelConfig from a Hugging Face config.json (path, folder or parsed dict).

    Accepts model_type qwen3_next, qwen3_5_text, qwen3_5_moe_text, and the multimodal wrappers
    qwen3_5 / qwen3_5_moe (their text_config is read; the vision tower is ignored). RoPE values
    come from `rope_parameters` (newer transformers) or the top-level `rope_theta` /
    `partial_rotary_factor` keys (older files). Missing required keys and features ttprefill
    does not implement (RoPE scaling, attention bias, no output gate, non-SiLU activation)
    raise HFConfigError naming the key.
    """
    raw, source = _read_config_source(path_or_dict)
    model_type = raw.get("model_type")
    if model_type in WRAPPER_MODEL_TYPES or (model_type is None and "text_config" in raw):
        if "text_config" not in raw:
            raise HFConfigError(f"{source}: model_type {model_type!r} needs a 'text_config' section")
        cfg = dict(raw["text_config"])
        cfg.setdefault("model_type", {"qwen3_5": "qwen3_5_text", "qwen3_5_moe": "qwen3_5_moe_text"}.get(model_type))
    else:
        cfg = dict(raw)
    model_type = cfg.get("model_type")
    supported = DENSE_TEXT_MODEL_TYPES + MOE_TEXT_MODEL_TYPES + WRAPPER_MODEL_TYPES
    if model_type not in DENSE_TEXT_MODEL_TYPES + MOE_TEXT_MODEL_TYPES:
        raise HFConfigError(f"{source}: unsupported model_type {model_type!r}; supported: {supported}")

    def need(key):
        if key not in cfg or cfg[key] is None:
            raise HFConfigError(f"{source}: required key {key!r} is missing (model_type {model_type})")
        return cfg[key]

    def typed(key, value, kind):
        # bool is an int subclass in Python; a config that says `"hidden_size": true` is still wrong
        integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not integral):
            raise HFConfigError(f"{source}: key {key!r} must be {'an integer' if kind is int else 'a number'}, "
                                f"got {value!r}")
        return kind(value)

    def need_int(key):
        return typed(key, need(key), int)

    def get_int(key, default):
        return typed(key, cfg.get(key, default), int)

    num_layers = need_int("num_hidden_layers")
    layer_types = cfg.get("layer_types")
    if layer_types is None:
        layer_types = hybrid_layer_types(num_layers, get_int("full_attention_interval", 4))
    else:
        layer_types = tuple(layer_types)
        unknown = sorted(set(layer_types) - set(LAYER_KINDS))
        if unknown:
            raise HFConfigError(f"{source}: 'layer_types' has unsupported kind(s) {unknown}; supported: {LAYER_KINDS}")

    rope = cfg.get("rope_parameters") or {}
    if cfg.get("rope_scaling"):
        raise HFConfigError(f"{source}: 'rope_scaling' {cfg['rope_scaling']} is not supported (plain RoPE only)")
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    if rope_type != "default":
        raise HFConfigError(f"{source}: rope_parameters.rope_type {rope_type!r} is not supported (only 'default')")
    rope_theta = rope.get("rope_theta", cfg.get("rope_theta"))
    if rope_theta is None:
        raise HFConfigError(f"{source}: required key 'rope_theta' is missing (top level or in 'rope_parameters')")
    partial_rotary_factor = rope.get("partial_rotary_factor", cfg.get("partial_rotary_factor", 0.25))

    if cfg.get("attention_bias", False):
        raise HFConfigError(f"{source}: 'attention_bias': true is not supported (projections have no bias)")
    if cfg.get("attn_output_gate", True) is not True:
        raise HFConfigError(f"{source}: 'attn_output_gate' must be true (the gated attention of GDN.md)")
    if cfg.get("hidden_act", "silu") != "silu":
        raise HFConfigError(f"{source}: 'hidden_act' {cfg['hidden_act']!r} is not supported (only 'silu')")

    is_moe = model_type in MOE_TEXT_MODEL_TYPES and int(cfg.get("num_experts", 1) or 0) > 0
    if "intermediate_size" in cfg and cfg["intermediate_size"]:
        intermediate_size = int(cfg["intermediate_size"])
    elif is_moe and cfg.get("shared_expert_intermediate_size"):
        intermediate_size = int(cfg["shared_expert_intermediate_size"])
    else:
        raise HFConfigError(
            f"{source}: required key 'intermediate_size' is missing (for MoE models "
            "'shared_expert_intermediate_size' is used as the dense stand-in width)"
        )

    try:
        return ModelConfig(
            name=str(raw.get("_name_or_path") or model_type),
            vocab_size=need_int("vocab_size"),
            hidden_size=need_int("hidden_size"),
            num_layers=num_layers,
            layer_types=layer_types,
            gdn_num_qk_heads=need_int("linear_num_key_heads"),
            gdn_num_v_heads=need_int("linear_num_value_heads"),
            gdn_key_head_dim=need_int("linear_key_head_dim"),
            gdn_value_head_dim=need_int("linear_value_head_dim"),
            gdn_conv_kernel=get_int("linear_conv_kernel_dim", 4),
            attn_num_heads=need_int("num_attention_heads"),
            attn_num_kv_heads=need_int("num_key_value_heads"),
            attn_head_dim=need_int("head_dim"),
            partial_rotary_factor=float(partial_rotary_factor),
            rope_theta=float(rope_theta),
            intermediate_size=intermediate_size,
            rms_norm_eps=typed("rms_norm_eps", cfg.get("rms_norm_eps", 1e-6), float),
            max_position_embeddings=get_int("max_position_embeddings", 32768),
            tie_word_embeddings=bool(raw.get("tie_word_embeddings", cfg.get("tie_word_embeddings", False))),
            real_ffn_is_moe=is_moe,
        )
    except ValueError as err:
        if isinstance(err, HFConfigError):
            raise
        raise HFConfigError(f"{source}: {err}") from err
