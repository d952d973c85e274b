"""LayerKernels on a device: the GDN chain and the flash-attention prefill as device programs.

Per attention layer there is one paged K/V cache (ttprefill.ops.flash_attention.KVCache) in device
DRAM; page ids are the prefix cache's, shared by all attention layers (a page is a block of tokens).
GDN states travel between the host and the device per chunk (the engine keeps them on the host so
that checkpoints are host arrays it can store or spill).

Every program's modeled cycles are summed into `modeled_s` (simulator only), which the engine
reports as modeled device time.
"""

from __future__ import annotations

import numpy as np
import torch

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.model.config import ModelConfig
from ttprefill.reference.gdn import GdnLayerParams

CLOCK_HZ = 1.0e9


class DeviceKernels:
    def __init__(self, config: ModelConfig, num_pages: int, page_tokens: int, gdn_chunk: int = 64, *,
                 backend: str = "sim", device=None, page_format: DataFormat = DataFormat.Float16_b,
                 fidelity: MathFidelity = MathFidelity.HiFi4):
        from ttprefill.device.backends import open_device
        from ttprefill.ops.flash_attention import KVCache

        self.config = config
        self.page_tokens = page_tokens
        self.gdn_chunk = gdn_chunk
        self.fidelity = fidelity
        self.device = device if device is not None else open_device(backend)
        self.caches = {
            i: KVCache.create(self.device, num_pages, page_tokens, config.attn_num_kv_heads, config.attn_head_dim,
                              page_format)
            for i in config.attention_layers
        }
        self.models_time = getattr(self.device, "kind", "") == "sim"
        self.modeled_s = 0.0
        self.programs = 0

    def _account(self, reports) -> None:
        for r in reports:
            self.programs += 1
            if self.models_time and getattr(r, "cycles", None) is not None:
                self.modeled_s += r.cycles / CLOCK_HZ

    def gdn_core(self, layer, qkv, z, a, b, params: dict, conv_state, recurrent_state):
        from ttprefill.ops.gdn import gdn_layer

        p = GdnLayerParams(params["num_qk_heads"], params["num_v_heads"], params["key_head_dim"],
                           params["value_head_dim"], _np(params["conv_weight"]), _np(params["A_log"]),
                           _np(params["dt_bias"]), _np(params["norm_weight"]), float(params["eps"]))
        reports: list = []
        y, conv, state, _ = gdn_layer(self.device, _np(qkv), _np(z), _np(a), _np(b), p, _np(conv_state),
                                      _np(recurrent_state), chunk=self.gdn_chunk, fidelity=self.fidelity,
                                      reports=reports)
        self._account(reports)
        return torch.from_numpy(y), torch.from_numpy(conv), torch.from_numpy(state)

    def attention(self, layer, q, k, v, p0, page_table, scale):
        from ttprefill.ops.flash_attention import flash_attention

        run = flash_attention(self.device, _np(q), _np(k), _np(v), self.caches[layer], list(page_table), p0,
                              scale=scale, return_run=True)
        self._account([run.write_report, run.attention_report])
        return torch.from_numpy(np.ascontiguousarray(run.out, np.float32))


def _np(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().numpy().astype(np.float32, copy=False)
    return np.asarray(x, np.float32)
