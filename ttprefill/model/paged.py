"""The hybrid stack as the engine runs it: chunk by chunk, attention K/V in pages, GDN states carried.

The projections, norms, RoPE and MLP run on the host in torch (ReferenceModel's code); the two
device-shaped parts go through a `LayerKernels` object:

* `gdn_core`: everything between a GDN layer's in-projections and its out-projection (conv + SiLU,
  gates, L2 norm, chunked scan, gated RMSNorm), with conv and recurrent state in and out;
* `attention`: writes the chunk's K/V into the request's pages (through its page table) and runs
  causal GQA attention of the chunk's queries against every K/V in those pages.

`TorchKernels` does both on the host (pages in numpy); `DeviceKernels` (ttprefill.model.device_kernels)
runs the device programs. Both give the same results up to the kernels' tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np
import torch

from ttprefill.model import torch_ops
from ttprefill.model.config import ModelConfig
from ttprefill.model.reference_model import ModelState, ReferenceModel


class LayerKernels(Protocol):
    page_tokens: int

    def gdn_core(self, layer: int, qkv: torch.Tensor, z: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
                 params: dict, conv_state: torch.Tensor, recurrent_state: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]: ...

    def attention(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p0: int,
                  page_table: Sequence[int], scale: float) -> torch.Tensor: ...


@dataclass
class HostPagePool:
    """K and V of every attention layer in pages of page_tokens tokens: [pages, page_tokens, Hkv, D]."""

    config: ModelConfig
    num_pages: int
    page_tokens: int

    def __post_init__(self):
        cfg = self.config
        shape = (self.num_pages, self.page_tokens, cfg.attn_num_kv_heads, cfg.attn_head_dim)
        self.k = {i: np.zeros(shape, np.float32) for i in cfg.attention_layers}
        self.v = {i: np.zeros(shape, np.float32) for i in cfg.attention_layers}

    def write(self, layer: int, page_table: Sequence[int], start: int, k: np.ndarray, v: np.ndarray) -> None:
        for t in range(k.shape[0]):
            pos = start + t
            page = page_table[pos // self.page_tokens]
            self.k[layer][page, pos % self.page_tokens] = k[t]
            self.v[layer][page, pos % self.page_tokens] = v[t]

    def gather(self, layer: int, page_table: Sequence[int], num_tokens: int) -> tuple[np.ndarray, np.ndarray]:
        pages = list(page_table[: -(-num_tokens // self.page_tokens)])
        k = self.k[layer][pages].reshape(-1, *self.k[layer].shape[2:])[:num_tokens]
        v = self.v[layer][pages].reshape(-1, *self.v[layer].shape[2:])[:num_tokens]
        return k, v


class TorchKernels:
    """Host reference kernels: the torch GDN core (chunked scan) and attention over host pages."""

    kind = "torch"

    def __init__(self, config: ModelConfig, num_pages: int, page_tokens: int, gdn_chunk: int = 64):
        self.pool = HostPagePool(config, num_pages, page_tokens)
        self.page_tokens = page_tokens
        self.gdn_chunk = gdn_chunk

    def gdn_core(self, layer, qkv, z, a, b, params, conv_state, recurrent_state):
        def scan(q, k, v, g, beta, state):
            return torch_ops.gdn_scan_chunked(q, k, v, g, beta, state, chunk=self.gdn_chunk)

        return torch_ops.gdn_layer_core(qkv, z, a, b, params, conv_state, recurrent_state, scan)

    def attention(self, layer, q, k, v, p0, page_table, scale):
        self.pool.write(layer, page_table, p0, k.numpy().astype(np.float32), v.numpy().astype(np.float32))
        keys, values = self.pool.gather(layer, page_table, p0 + q.shape[0])
        return torch_ops.causal_attention(q, torch.as_tensor(keys, dtype=q.dtype),
                                          torch.as_tensor(values, dtype=q.dtype), p0, scale)


class PagedHybridModel(ReferenceModel):
    """ReferenceModel whose GDN cores and attention go through LayerKernels, K/V living in pages."""

    def __init__(self, config: ModelConfig, weights: dict[str, np.ndarray], kernels: LayerKernels):
        super().__init__(config, weights, dtype=torch.float32)
        self.kernels = kernels
        self._page_table: Sequence[int] = ()

    @torch.no_grad()
    def prefill_chunk(self, tokens: Sequence[int], state: ModelState, page_table: Sequence[int]) -> torch.Tensor:
        """Run tokens at positions state.num_tokens.. and return the last token's logits [vocab]."""
        needed = -(-(state.num_tokens + len(tokens)) // self.kernels.page_tokens)
        if len(page_table) < needed:
            raise ValueError(f"page table has {len(page_table)} pages; {needed} are needed for "
                             f"{state.num_tokens + len(tokens)} tokens")
        self._page_table = page_table
        try:
            return self.forward(tokens, state, state.num_tokens, last_only=True)
        finally:
            self._page_table = ()

    def _gdn_core(self, i, qkv, z, a, b, params: dict, state: ModelState):
        y, state.conv_states[i], state.recurrent_states[i] = self.kernels.gdn_core(
            i, qkv, z, a, b, params, state.conv_states[i], state.recurrent_states[i])
        return y

    def _attend(self, i, q, k, v, p0: int, state: ModelState):
        return self.kernels.attention(i, q, k, v, p0, self._page_table, self.config.attn_head_dim**-0.5)
