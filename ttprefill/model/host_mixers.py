"""The stack's mixer cores on the host with attention K/V in pages, as the device keeps them.

`HostMixers` keeps K/V as the device stack does (ttprefill.model.device_stack): the same page ids
(the prefix cache's, shared by every attention layer), the same per-chunk context, the torch GDN
layer core and causal attention in place of the device programs. `HostKVCache` is the host twin of
the device's KVCache (ttprefill.ops.attention): one attention layer's K/V pages.
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

import numpy as np
import torch

from ttprefill.model import torch_ops
from ttprefill.model.config import ModelConfig
from ttprefill.model.stack import ChunkContext, ModelState, attention_scale, keep_gdn_checkpoints
from ttprefill.reference.gdn import GdnLayerParams


class HostKVCache:
    """K and V of one attention layer in pages of page_tokens tokens: [pages, page_tokens, Hkv, D]."""

    def __init__(self, num_pages: int, page_tokens: int, kv_heads: int, head_dim: int):
        self.page_tokens = page_tokens
        self.k = np.zeros((num_pages, page_tokens, kv_heads, head_dim), np.float32)
        self.v = np.zeros_like(self.k)

    def write(self, page_table: Sequence[int], start: int, k: np.ndarray, v: np.ndarray) -> None:
        for t in range(k.shape[0]):
            pos = start + t
            page = page_table[pos // self.page_tokens]
            self.k[page, pos % self.page_tokens] = k[t]
            self.v[page, pos % self.page_tokens] = v[t]

    def gather(self, page_table: Sequence[int], num_tokens: int) -> tuple[np.ndarray, np.ndarray]:
        pages = list(page_table[: -(-num_tokens // self.page_tokens)])
        k = self.k[pages].reshape(-1, *self.k.shape[2:])[:num_tokens]
        v = self.v[pages].reshape(-1, *self.v.shape[2:])[:num_tokens]
        return k, v


class HostMixers:
    """Torch GDN layer core (chunked scan) and attention over host K/V pages."""

    models_time = False  # host compute: no modeled device time
    modeled_s = 0.0

    def __init__(self, config: ModelConfig, num_pages: int, page_tokens: int, gdn_chunk: int):
        self.page_tokens = page_tokens
        self.scale = attention_scale(config)
        self.gdn_chunk = gdn_chunk
        self.scan = partial(torch_ops.gdn_scan_chunked, chunk=gdn_chunk)
        self.kv = {i: HostKVCache(num_pages, page_tokens, config.attn_num_kv_heads, config.attn_head_dim)
                   for i in config.attention_layers}

    def gdn_layer_core(self, layer, qkv, z, a, b, params: GdnLayerParams, state: ModelState, context: ChunkContext):
        kept, conv_before = {}, state.conv_states[layer]
        offsets = context.checkpoint_offsets(self.gdn_chunk)
        scan = torch_ops.scan_keeping_states(self.scan, offsets, kept) if offsets else self.scan
        y, state.conv_states[layer], state.recurrent_states[layer] = torch_ops.gdn_layer_core(
            qkv, z, a, b, params, conv_before, state.recurrent_states[layer], scan)
        keep_gdn_checkpoints(state, layer, context, conv_before, qkv, kept)
        return y

    def attention(self, layer, q, k, v, state: ModelState, context: ChunkContext):
        context.check_page_table(self.page_tokens)
        cache = self.kv[layer]
        cache.write(context.page_table, context.start, k.numpy().astype(np.float32), v.numpy().astype(np.float32))
        keys, values = cache.gather(context.page_table, context.end)
        return torch_ops.causal_attention(q, torch.as_tensor(keys, dtype=q.dtype),
                                          torch.as_tensor(values, dtype=q.dtype), context.start, self.scale)
