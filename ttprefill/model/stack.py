"""The hybrid stack as a pipeline of named stages, with the two token mixers plugged in.

    x = embed(tokens)
    per layer i:  x = x + mixer_i(norm(x));  x = x + mlp(norm(x))
                  mixer_i = GDN layer, or attention when config.layer_types says so
    logits = lm_head(norm(x))

The stack computes everything except the token mixers' cores in torch: embedding, norms, the
projections, RoPE, the MLP and the head. The mixers' cores (what a GDN layer does between its in-
and out-projections; causal attention over every K/V so far) go through a `TokenMixers` object, so
the same stack runs on the torch references, on host pages, or on device programs.

Each call runs one chunk of one prompt. What the chunk needs beyond its tokens and the carried
`ModelState` comes in a `ChunkContext` (start position, the request's attention page table), passed
down to the mixers; nothing about a chunk is kept on the stack or the mixers between calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
import torch.nn.functional as F

from ttprefill.model import torch_ops
from ttprefill.model.config import ModelConfig
from ttprefill.model.weights import layer_prefix, parameter_shapes
from ttprefill.reference.gdn import GdnLayerParams


@dataclass
class ModelState:
    """Everything a later chunk of the same prompt needs from the earlier ones.

    keys / values hold attention K/V only for mixers that keep them in the state (the reference);
    paged mixers keep them in pages named by ChunkContext.page_table instead.
    """

    num_tokens: int
    conv_states: dict[int, torch.Tensor] = field(default_factory=dict)  # GDN layer -> [W-1, C]
    recurrent_states: dict[int, torch.Tensor] = field(default_factory=dict)  # GDN layer -> [HV, K, V]
    keys: dict[int, torch.Tensor] = field(default_factory=dict)  # attn layer -> [num_tokens, Hkv, D]
    values: dict[int, torch.Tensor] = field(default_factory=dict)  # attn layer -> [num_tokens, Hkv, D]
    # The GDN states at the last chunk's ChunkContext.checkpoints (positions inside it), each a ModelState of
    # conv and recurrent states only; a chunk's forward replaces them, the engine hands them to the prefix cache.
    checkpoints: dict[int, "ModelState"] = field(default_factory=dict)

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
        """A deep copy, e.g. a prefix-cache checkpoint that later chunks must not disturb."""
        return ModelState(
            num_tokens=self.num_tokens,
            conv_states={i: t.clone() for i, t in self.conv_states.items()},
            recurrent_states={i: t.clone() for i, t in self.recurrent_states.items()},
            keys={i: t.clone() for i, t in self.keys.items()},
            values={i: t.clone() for i, t in self.values.items()},
        )


@dataclass(frozen=True)
class ChunkContext:
    """What one chunk of one prompt runs with, besides its tokens and the carried state.

    Plain values only (positions and page ids), so a stack of device ops can take the same object.
    """

    start: int  # prompt position of the chunk's first token (= tokens already in the state)
    num_tokens: int
    page_table: tuple[int, ...] = ()  # the request's attention pages in token order (paged mixers)
    # Positions strictly inside the chunk whose GDN states the mixers keep (ModelState.checkpoints); each a
    # whole number of GDN chunks from `start`, so the scan passes through it.
    checkpoints: tuple[int, ...] = ()

    @property
    def end(self) -> int:
        return self.start + self.num_tokens

    def checkpoint_offsets(self, gdn_chunk: int | None = None) -> list[int]:
        """The checkpoints as token offsets in the chunk; refuses positions outside (start, end) or, given
        the scan's chunk, off its chunk boundaries."""
        offsets = [p - self.start for p in self.checkpoints]
        if offsets != sorted(set(offsets)) or any(not 0 < o < self.num_tokens for o in offsets):
            raise ValueError(f"checkpoints {list(self.checkpoints)} must be ascending positions inside the chunk "
                             f"({self.start}, {self.end}); the state at the chunk's end is the state it leaves")
        if gdn_chunk and any(o % gdn_chunk for o in offsets):
            raise ValueError(f"checkpoints {list(self.checkpoints)} must be whole GDN chunks ({gdn_chunk} tokens) "
                             f"from the chunk's start {self.start}")
        return offsets

    def positions(self) -> torch.Tensor:
        return torch.arange(self.start, self.end)

    def check_page_table(self, page_tokens: int) -> None:
        """Paged mixers: the page table must cover every token up to the chunk's end."""
        needed = -(-self.end // page_tokens)
        if len(self.page_table) < needed:
            raise ValueError(f"page table has {len(self.page_table)} pages; {needed} are needed for "
                             f"{self.end} tokens")


@dataclass(frozen=True)
class UpcomingChunk:
    """A chunk the engine will forward next for the same request (it runs alone, so its chunks are known): what a
    device stack may start on ahead of time, its tokens' embeddings (DeviceStack) or whole stages
    (model/pipeline_stack.py). The forward of it carries the same values."""

    tokens: tuple[int, ...]
    context: ChunkContext
    sync_end: bool = False
    need_logits: bool = False


class TokenMixers(Protocol):
    """The two token-mixer cores of the stack. Torch tensors in and out, in the stack's dtype."""

    def gdn_layer_core(self, layer: int, qkv: torch.Tensor, z: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
            params: GdnLayerParams, state: ModelState, context: ChunkContext) -> torch.Tensor:
        """GDN layer `layer` between its in- and out-projections: conv + SiLU, gates, L2 norm, scan, gated
        RMSNorm (qkv [T, C] pre-conv, z [T, HV*V], a, b [T, HV]). Returns y [T, HV*V] and replaces the
        layer's conv and recurrent states in `state`."""
        ...

    def attention(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: ModelState,
                  context: ChunkContext) -> torch.Tensor:
        """Store the chunk's K/V (k, v [T, Hkv, D], after k_norm and RoPE) wherever these mixers keep them,
        then causal GQA attention of q [T, Hq, D] against every K/V of the prompt so far. Returns o [T, Hq, D]
        (the output gate is applied by the stack)."""
        ...


class HybridStack:
    """The whole model over a weight dict (HF layout, see weights.py), its mixer cores in `mixers`."""

    def __init__(self, config: ModelConfig, weights: dict[str, np.ndarray], mixers: TokenMixers,
                 dtype: torch.dtype = torch.float32):
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"the model runs in float32 or float64, not {dtype}")
        self.config = config
        self.dtype = dtype
        self.mixers = mixers
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
        self.gdn_params = {i: self._gdn_params(i) for i in config.gdn_layers}

    def new_state(self) -> ModelState:
        return ModelState.empty(self.config, self.dtype)

    @torch.no_grad()
    def forward(self, tokens, state: ModelState, context: ChunkContext, last_only: bool = False) -> torch.Tensor:
        """Run one chunk (tokens 1-D at positions context.start..) and update `state` in place.

        Returns logits [T, vocab] (or [vocab] for the last token when last_only).
        """
        cfg = self.config
        tokens = torch.as_tensor(np.asarray(tokens), dtype=torch.long).reshape(-1)
        self._check_chunk(tokens, state, context)
        x = self.w["model.embed_tokens.weight"][tokens]
        state.checkpoints = {p: ModelState(p) for p in context.checkpoints}
        for i in range(cfg.num_layers):
            p = layer_prefix(i)
            h = self._norm(x, p + "input_layernorm.weight")
            if cfg.is_attention_layer(i):
                x = x + self._attention_layer(i, h, state, context)
            else:
                x = x + self._gdn_layer(i, h, state, context)
            x = x + self._mlp(i, self._norm(x, p + "post_attention_layernorm.weight"))
        state.num_tokens += context.num_tokens
        if last_only:
            x = x[-1:]
        logits = self._norm(x, "model.norm.weight") @ self.w["lm_head.weight"].T
        return logits[0] if last_only else logits

    def _check_chunk(self, tokens: torch.Tensor, state: ModelState, context: ChunkContext) -> None:
        cfg = self.config
        T = tokens.shape[0]
        if T == 0:
            raise ValueError("forward needs at least one token")
        if T != context.num_tokens:
            raise ValueError(f"the chunk context is for {context.num_tokens} tokens, the chunk has {T}")
        if context.start != state.num_tokens:
            raise ValueError(
                f"state holds {state.num_tokens} tokens, so the next piece must start there; got start_pos={context.start}"
            )
        if context.end > cfg.max_position_embeddings:
            raise ValueError(
                f"positions up to {context.end} exceed max_position_embeddings={cfg.max_position_embeddings}"
            )
        if int(tokens.min()) < 0 or int(tokens.max()) >= cfg.vocab_size:
            raise ValueError(f"token ids must be in [0, {cfg.vocab_size}); got {int(tokens.min())}..{int(tokens.max())}")

    # ---- stages --------------------------------------------------------------------------------
    def _norm(self, x, name):
        return torch_ops.zero_centred_rmsnorm(x, self.w[name], self.config.rms_norm_eps)

    def _linear(self, x, name):
        return x @ self.w[name].T

    def _mlp(self, i, x):
        p = layer_prefix(i) + "mlp."
        gate = F.silu(self._linear(x, p + "gate_proj.weight"))
        return self._linear(gate * self._linear(x, p + "up_proj.weight"), p + "down_proj.weight")

    def _gdn_params(self, i) -> GdnLayerParams:
        cfg = self.config
        p = layer_prefix(i) + "linear_attn."
        return GdnLayerParams(cfg.gdn_num_qk_heads, cfg.gdn_num_v_heads, cfg.gdn_key_head_dim, cfg.gdn_value_head_dim,
                              self.w[p + "conv1d.weight"][:, 0, :], self.w[p + "A_log"], self.w[p + "dt_bias"],
                              self.w[p + "norm.weight"], cfg.rms_norm_eps)

    def _gdn_layer(self, i, x, state: ModelState, context: ChunkContext):
        p = layer_prefix(i) + "linear_attn."
        qkv = self._linear(x, p + "in_proj_qkv.weight")
        z = self._linear(x, p + "in_proj_z.weight")
        b = self._linear(x, p + "in_proj_b.weight")
        a = self._linear(x, p + "in_proj_a.weight")
        y = self.mixers.gdn_layer_core(i, qkv, z, a, b, self.gdn_params[i], state, context)
        return self._linear(y, p + "out_proj.weight")

    def _attention_layer(self, i, x, state: ModelState, context: ChunkContext):
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
        cos, sin = torch_ops.rope_cos_sin(context.positions(), cfg.rotary_dim, cfg.rope_theta, self.dtype)
        q = torch_ops.apply_partial_rope(q, cos, sin)
        k = torch_ops.apply_partial_rope(k, cos, sin)
        o = self.mixers.attention(i, q, k, v, state, context)
        o = o * torch.sigmoid(gate)
        return self._linear(o.reshape(T, Hq * D), p + "o_proj.weight")


def keep_gdn_checkpoints(state: ModelState, layer: int, context: ChunkContext, conv_before: torch.Tensor,
                         qkv_preconv: torch.Tensor, recurrent: dict[int, torch.Tensor]) -> None:
    """Stores GDN layer `layer`'s states at the chunk's checkpoints in state.checkpoints: the recurrent state
    after `offset` tokens (recurrent[offset], from the scan) and the conv state there, the kernel - 1 pre-conv
    rows before it (from the chunk's rows, or the carried conv state when it reaches back that far)."""
    history = torch.cat([conv_before, qkv_preconv], dim=0)  # row r holds position start - (kernel - 1) + r
    width = conv_before.shape[0]
    for position in context.checkpoints:
        offset = position - context.start
        state.checkpoints[position].conv_states[layer] = history[offset:offset + width].clone()
        state.checkpoints[position].recurrent_states[layer] = recurrent[offset]


def attention_scale(config: ModelConfig) -> float:
    return config.attn_head_dim**-0.5
