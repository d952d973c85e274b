"""Torch reference of the whole hybrid stack (shared/GDN.md), prefilled piece by piece.

ReferenceModel is the stack (ttprefill.model.stack) with `ReferenceMixers`: the torch GDN layer core
and causal attention, the attention K/V of every token so far kept in ModelState. fp32 by default,
fp64 on request. One sequence at a time: tokens is 1-D. Prefilling in one piece or in several gives
the same logits up to rounding.

Other scan or attention implementations (e.g. the numpy references) plug in through two callables,
torch tensors in and out, model dtype:
    gdn_scan(q [T,H,K], k [T,H,K], v [T,HV,V], g [T,HV], beta [T,HV], state [HV,K,V])
        -> (o [T,HV,V], new_state [HV,K,V])            q already L2-normalised and * K**-0.5
    attention(q [Sq,Hq,D], k [Skv,Hkv,D], v [Skv,Hkv,D], p0: int, scale: float)
        -> o [Sq,Hq,D]                                   causal, GQA; gate applied afterwards
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import numpy as np
import torch

from ttprefill.model import torch_ops
from ttprefill.model.config import ModelConfig
from ttprefill.model.stack import ChunkContext, HybridStack, ModelState, attention_scale, keep_gdn_checkpoints
from ttprefill.ops.gdn import DEFAULT_CHUNK
from ttprefill.reference.gdn import GdnLayerParams

__all__ = ["ModelState", "ReferenceMixers", "ReferenceModel"]

GdnScanFn = Callable[..., tuple[torch.Tensor, torch.Tensor]]
AttentionFn = Callable[..., torch.Tensor]


class ReferenceMixers:
    """Mixer cores in torch; attention K/V appended to the state, so a state is a whole prefix."""

    def __init__(self, config: ModelConfig, gdn_scan: GdnScanFn, attention: AttentionFn):
        self.scale = attention_scale(config)
        self.gdn_scan = gdn_scan
        self.attend = attention

    def gdn_layer_core(self, layer, qkv, z, a, b, params: GdnLayerParams, state: ModelState, context: ChunkContext):
        kept, conv_before = {}, state.conv_states[layer]
        offsets = context.checkpoint_offsets()
        scan = torch_ops.scan_keeping_states(self.gdn_scan, offsets, kept) if offsets else self.gdn_scan
        y, state.conv_states[layer], state.recurrent_states[layer] = torch_ops.gdn_layer_core(
            qkv, z, a, b, params, conv_before, state.recurrent_states[layer], scan)
        keep_gdn_checkpoints(state, layer, context, conv_before, qkv, kept)
        return y

    def attention(self, layer, q, k, v, state: ModelState, context: ChunkContext):
        state.keys[layer] = torch.cat([state.keys[layer], k], dim=0)
        state.values[layer] = torch.cat([state.values[layer], v], dim=0)
        return self.attend(q, state.keys[layer], state.values[layer], context.start, self.scale)


class ReferenceModel:
    """The hybrid stack as plain torch functions over a weight dict (HF layout, see weights.py).

    gdn_chunk: chunk length of the chunked GDN scan (the device scan's default), or None for the
    recurrent scan. gdn_scan / attention: replacements with the signatures in the module docstring.
    """

    def __init__(
        self,
        config: ModelConfig,
        weights: dict[str, np.ndarray],
        dtype: torch.dtype = torch.float32,
        gdn_chunk: int | None = DEFAULT_CHUNK,
        gdn_scan: GdnScanFn | None = None,
        attention: AttentionFn | None = None,
    ):
        if gdn_scan is None:
            if gdn_chunk is None:
                gdn_scan = torch_ops.gdn_scan_recurrent
            else:
                gdn_scan = partial(torch_ops.gdn_scan_chunked, chunk=gdn_chunk)
        mixers = ReferenceMixers(config, gdn_scan, attention or torch_ops.causal_attention)
        self.stack = HybridStack(config, weights, mixers, dtype)
        self.config = config
        self.dtype = dtype

    def new_state(self) -> ModelState:
        return self.stack.new_state()

    def forward(self, tokens, state: ModelState, start_pos: int, last_only: bool = False) -> torch.Tensor:
        """Prefill tokens (1-D) at positions start_pos.. and update state in place.

        Returns logits [T, vocab] (or [vocab] for the last token when last_only).
        """
        context = ChunkContext(start_pos, int(np.asarray(tokens).reshape(-1).shape[0]))
        return self.stack.forward(tokens, state, context, last_only)
