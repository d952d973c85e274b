"""Torch reference of the whole hybrid stack (shared/GDN.md), prefilled piece by piece.

    x = embed(tokens)
    per layer i:  x = x + mixer_i(norm(x));  x = x + mlp(norm(x))
                  mixer_i = GDN layer, or attention when (i+1) % 4 == 0 (config.layer_types)
    logits = lm_head(norm(x))

All norms around the mixers are zero-centred RMSNorm (x_hat * (1 + w)). fp32 by default,
fp64 on request. One sequence at a time: tokens is 1-D.

State carried between prefill pieces lives in ModelState: per GDN layer the conv state (last
kernel-1 pre-conv rows) and the recurrent state [HV, K, V]; per attention layer the keys (after
k_norm and RoPE) and values of every token so far. Prefilling in one piece or in several gives
the same logits up to rounding.

Device kernels hook in through two callables (torch tensors in and out, model dtype):
    gdn_scan(q [T,H,K], k [T,H,K], v [T,HV,V], g [T,HV], beta [T,HV], state [HV,K,V])
        -> (o [T,HV,V], new_state [HV,K,V])            q already L2-normalised and * K**-0.5
    attention(q [Sq,Hq,D], k [Skv,Hkv,D], v [Skv,Hkv,D], p0: int, scale: float)
        -> o [Sq,Hq,D]                                   causal, GQA; gate applied afterwards
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from ttprefill.model import torch_ops
from ttprefill.model.config import ModelConfig
from ttprefill.model.weights import layer_prefix, parameter_shapes

GdnScanFn = Callable[..., tuple[torch.Tensor, torch.Tensor]]
AttentionFn = Callable[..., torch.Tensor]


@dataclass
class ModelState:
    """Everything a later prefill piece needs from the earlier ones."""

    num_tokens: int
    conv_states: dict[int, torch.Tensor] = field(default_factory=dict)  # GDN layer -> [W-1, C]
    recurrent_states: dict[int, torch.Tensor] = field(default_factory=dict)  # GDN layer -> [HV, K, V]
    keys: dict[int, torch.Tensor] = field(default_factory=dict)  # attn layer -> [num_tokens, Hkv, D]
    values: dict[int, torch.Tensor] = field(default_factory=dict)  # attn layer -> [num_tokens, Hkv, D]

    @classmethod
    def empty(cls, config: ModelConfig, dtype: torch.dtype = torch.float32) -> "ModelState":
        state = cls(num_tokens=0)
        for i in config.gdn_layers:
            state.conv_states[i] = torch.zeros(config.gdn_conv_state_len, config.gdn_conv_channels, dtype=dtype)
            state.recurrent_states[i] = torch.zeros(
                config.gdn_num_v_heads, config.gdn_key_head_dim, config.gdn_value_head_dim, dtype=dtype
            )
        for i in config.attention_layers:
            state.keys[i] = torch.zeros(0, config.attn_num_kv_heads, config.attn_head_dim, dtype=dtype)
            state.values[i] = torch.zeros(0, config.attn_num_kv_heads, config.attn_head_dim, dtype=dtype)
        return state

    def clone(self) -> "ModelState":
        """A deep copy, e.g. a prefix-cache checkpoint that later pieces must not disturb."""
        return ModelState(
            num_tokens=self.num_tokens,
            conv_states={i: t.clone() for i, t in self.conv_states.items()},
            recurrent_states={i: t.clone() for i, t in self.recurrent_states.items()},
            keys={i: t.clone() for i, t in self.keys.items()},
            values={i: t.clone() for i, t in self.values.items()},
        )


class ReferenceModel:
    """The hybrid stack as plain torch functions over a weight dict (HF layout, see weights.py).

    gdn_chunk: chunk length of the chunked GDN scan, or None for the recurrent scan.
    gdn_scan / attention: optional replacements (e.g. device kernels) with the signatures in
    the module docstring; they default to the torch references.
    """

    def __init__(
        self,
        config: ModelConfig,
        weights: dict[str, np.ndarray],
        dtype: torch.dtype = torch.float32,
        gdn_chunk: int | None = 64,
        gdn_scan: GdnScanFn | None = None,
        attention: AttentionFn | None = None,
    ):
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"the reference model runs in float32 or float64, not {dtype}")
        self.config = config
        self.dtype = dtype
        expected = parameter_shapes(config)
        missing = [n for n in expected if n not in weights]
        if missing:
            raise ValueError(f"weights lack {missing[:5]} for config {config.name}; use weights.load_weights")
        self.w = {}
        for name, shape in expected.items():
            if tuple(weights[name].shape) != shape:
                raise ValueError(f"tensor {name!r}: expected shape {shape}, got {tuple(weights[name].shape)}")
            self.w[name] = torch.as_tensor(np.asarray(weights[name]), dtype=dtype)
        if config.tie_word_embeddings:
            self.w["lm_head.weight"] = self.w["model.embed_tokens.weight"]
        if gdn_scan is None:
            if gdn_chunk is None:
                gdn_scan = torch_ops.gdn_scan_recurrent
            else:
                gdn_scan = partial(torch_ops.gdn_scan_chunked, chunk=gdn_chunk)
        self.gdn_scan = gdn_scan
        self.attention = attention if attention is not None else torch_ops.causal_attention

    def new_state(self) -> ModelState:
        return ModelState.empty(self.config, self.dtype)

    # ---- the stack ---------------------------------------------------------------------------
    @torch.no_grad()
    def forward(self, tokens, state: ModelState, start_pos: int, last_only: bool = False) -> torch.Tensor:
        """Prefill tokens (1-D) at positions start_pos.. and update state in place.

        Returns logits [T, vocab] (or [vocab] for the last token when last_only).
        """
        cfg = self.config
        tokens = torch.as_tensor(np.asarray(tokens), dtype=torch.long).reshape(-1)
        T = tokens.shape[0]
        if T == 0:
            raise ValueError("forward needs at least one token")
        if start_pos != state.num_tokens:
            raise ValueError(
                f"state holds {state.num_tokens} tokens, so the next piece must start there; got start_pos={start_pos}"
            )
        if start_pos + T > cfg.max_position_embeddings:
            raise ValueError(
                f"positions up to {start_pos + T} exceed max_position_embeddings={cfg.max_position_embeddings}"
            )
        if int(tokens.min()) < 0 or int(tokens.max()) >= cfg.vocab_size:
            raise ValueError(f"token ids must be in [0, {cfg.vocab_size}); got {int(tokens.min())}..{int(tokens.max())}")

        x = self.w["model.embed_tokens.weight"][tokens]
        positions = torch.arange(start_pos, start_pos + T)
        for i in range(cfg.num_layers):
            p = layer_prefix(i)
            h = self._norm(x, p + "input_layernorm.weight")
            if cfg.is_attention_layer(i):
                x = x + self._attention_layer(i, h, state, positions)
            else:
                x = x + self._gdn_layer(i, h, state)
            x = x + self._mlp(i, self._norm(x, p + "post_attention_layernorm.weight"))
        state.num_tokens += T
        if last_only:
            x = x[-1:]
        logits = self._norm(x, "model.norm.weight") @ self.w["lm_head.weight"].T
        return logits[0] if last_only else logits

    def _norm(self, x, name):
        return torch_ops.zero_centred_rmsnorm(x, self.w[name], self.config.rms_norm_eps)

    def _linear(self, x, name):
        return x @ self.w[name].T

    def _mlp(self, i, x):
        p = layer_prefix(i) + "mlp."
        gate = F.silu(self._linear(x, p + "gate_proj.weight"))
        return self._linear(gate * self._linear(x, p + "up_proj.weight"), p + "down_proj.weight")

    def _gdn_layer(self, i, x, state: ModelState):
        cfg = self.config
        p = layer_prefix(i) + "linear_attn."
        qkv = self._linear(x, p + "in_proj_qkv.weight")
        z = self._linear(x, p + "in_proj_z.weight")
        b = self._linear(x, p + "in_proj_b.weight")
        a = self._linear(x, p + "in_proj_a.weight")
        params = {
            "num_qk_heads": cfg.gdn_num_qk_heads,
            "num_v_heads": cfg.gdn_num_v_heads,
            "key_head_dim": cfg.gdn_key_head_dim,
            "value_head_dim": cfg.gdn_value_head_dim,
            "conv_weight": self.w[p + "conv1d.weight"][:, 0, :],
            "A_log": self.w[p + "A_log"],
            "dt_bias": self.w[p + "dt_bias"],
            "norm_weight": self.w[p + "norm.weight"],
            "eps": cfg.rms_norm_eps,
        }
        y = self._gdn_core(i, qkv, z, a, b, params, state)
        return self._linear(y, p + "out_proj.weight")

    def _gdn_core(self, i, qkv, z, a, b, params: dict, state: ModelState):
        """Everything between the in- and out-projections; updates the layer's states."""
        y, state.conv_states[i], state.recurrent_states[i] = torch_ops.gdn_layer_core(
            qkv, z, a, b, params, state.conv_states[i], state.recurrent_states[i], self.gdn_scan
        )
        return y

    def _attention_layer(self, i, x, state: ModelState, positions):
        cfg = self.config
        p = layer_prefix(i) + "self_attn."
        T = x.shape[0]
        Hq, Hkv, D = cfg.attn_num_heads, cfg.attn_num_kv_heads, cfg.attn_head_dim
        q_and_gate = self._linear(x, p + "q_proj.weight").reshape(T, Hq, 2 * D)
        q, gate = q_and_gate[..., :D], q_and_gate[..., D:]
        k = self._linear(x, p + "k_proj.weight").reshape(T, Hkv, D)
        v = self._linear(x, p + "v_proj.weight").reshape(T, Hkv, D)
        q = torch_ops.zero_centred_rmsnorm(q, self.w[p + "q_norm.weight"], cfg.rms_norm_eps)
        k = torch_ops.zero_centred_rmsnorm(k, self.w[p + "k_norm.weight"], cfg.rms_norm_eps)
        cos, sin = torch_ops.rope_cos_sin(positions, cfg.rotary_dim, cfg.rope_theta, self.dtype)
        q = torch_ops.apply_partial_rope(q, cos, sin)
        k = torch_ops.apply_partial_rope(k, cos, sin)
        o = self._attend(i, q, k, v, int(positions[0]), state)
        o = o * torch.sigmoid(gate)
        return self._linear(o.reshape(T, Hq * D), p + "o_proj.weight")

    def _attend(self, i, q, k, v, p0: int, state: ModelState):
        """Append this piece's K/V to the layer's cache and attend over all of it."""
        state.keys[i] = torch.cat([state.keys[i], k], dim=0)
        state.values[i] = torch.cat([state.values[i], v], dim=0)
        return self.attention(q, state.keys[i], state.values[i], p0, self.config.attn_head_dim**-0.5)
