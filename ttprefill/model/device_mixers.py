"""The stack's mixer cores as device programs: the GDN layer core and the paged flash attention.

Per attention layer there is one paged KVCache in device DRAM; page ids are the prefix cache's,
shared by all attention layers (a page is a block of tokens). GDN states travel between the host
and the device per chunk (the engine keeps them on the host so that checkpoints are host arrays it
can store or spill).

Every program's modeled cycles are summed into `modeled_s` when the device models time (the
simulator); the engine reports that as modeled device time.
"""

from __future__ import annotations

import numpy as np
import torch

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.model.config import ModelConfig
from ttprefill.model.stack import ChunkContext, ModelState, attention_scale
from ttprefill.reference.gdn import GdnLayerParams


class DeviceMixers:
    def __init__(self, config: ModelConfig, num_pages: int, page_tokens: int, *, gdn_chunk: int,
                 gdn_fidelity: MathFidelity, attention_fidelity: MathFidelity, page_format: DataFormat,
                 backend: str = "sim", device=None):
        from ttprefill.device.backends import open_device
        from ttprefill.ops.attention import FlashAttentionConfig, KVCache

        self.config = config
        self.page_tokens = page_tokens
        self.scale = attention_scale(config)
        self.gdn_chunk = gdn_chunk
        self.gdn_fidelity = gdn_fidelity
        self.attention_config = FlashAttentionConfig(math_fidelity=attention_fidelity)
        self.device = device if device is not None else open_device(backend)
        self.kv = {
            i: KVCache.create(self.device, num_pages, page_tokens, config.attn_num_kv_heads, config.attn_head_dim,
                              page_format)
            for i in config.attention_layers
        }
        self.models_time = self.device.capabilities.models_time
        self.modeled_s = 0.0
        self.programs = 0

    def _account(self, reports) -> None:
        for report in reports:
            self.programs += 1
            if report.modeled_s is not None:
                self.modeled_s += report.modeled_s

    def gdn_layer_core(self, layer, qkv, z, a, b, params: GdnLayerParams, state: ModelState, context: ChunkContext):
        from ttprefill.ops.gdn import gdn_layer

        p = GdnLayerParams(params.num_qk_heads, params.num_v_heads, params.key_head_dim, params.value_head_dim,
                           _np(params.conv_weight), _np(params.A_log), _np(params.dt_bias), _np(params.norm_weight),
                           float(params.eps))
        reports: list = []
        y, conv, recurrent, _ = gdn_layer(self.device, _np(qkv), _np(z), _np(a), _np(b), p,
                                          _np(state.conv_states[layer]), _np(state.recurrent_states[layer]),
                                          chunk=self.gdn_chunk, fidelity=self.gdn_fidelity, reports=reports)
        self._account(reports)
        state.conv_states[layer] = torch.from_numpy(conv)
        state.recurrent_states[layer] = torch.from_numpy(recurrent)
        return torch.from_numpy(y)

    def attention(self, layer, q, k, v, state: ModelState, context: ChunkContext):
        from ttprefill.ops.attention import flash_attention

        context.check_page_table(self.page_tokens)
        run = flash_attention(self.device, _np(q), _np(k), _np(v), self.kv[layer], list(context.page_table),
                              context.start, scale=self.scale, config=self.attention_config, return_run=True)
        self._account([run.write_report, run.attention_report])
        return torch.from_numpy(np.ascontiguousarray(run.out, np.float32))


def _np(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().numpy().astype(np.float32, copy=False)
    return np.asarray(x, np.float32)
