"""Where one block ends and the next begins, the device stack runs one program: the residual add fused with
the next block's RMSNorm (ops/norm add_rms_norm), and a GDN layer's z, b and a come out of one projection.
Counted by hand for the tiny model (3 GDN layers, then 1 attention layer; hidden 256) on one chunk of 40
tokens: every block boundary but the prompt's last is an add + norm; the first layer's input norm and the final
norm (of the last tile row: 8 tokens) run on their own; the last MLP's add is a plain add. The logits against
the fp64 torch reference are checked by tests/test_device_stack.py and the transformers oracle."""

from __future__ import annotations

from collections import Counter

from ttprefill.device.sim_device import SimDevice
from ttprefill.engine import Engine, EngineOptions
from ttprefill.model.config import get_preset
from ttprefill.model.weights import random_weights

TINY = get_preset("tiny")


def test_block_edges_run_fused(monkeypatch):
    names = Counter()
    matmul_widths = Counter()
    run = SimDevice.run

    def spy(self, program):
        names[program.name.split("_T")[0] if program.name.startswith("add_rmsnorm") else program.name] += 1
        if program.name.startswith("linear_"):  # linear_k{K}_n{N}_rows..: one row slab at 40 tokens
            matmul_widths[int(program.name.split("_n")[1].split("_")[0])] += 1
        return run(self, program)

    monkeypatch.setattr(SimDevice, "run", spy)
    engine = Engine(TINY, random_weights(TINY, seed=3), backend="sim", options=EngineOptions(chunk_tokens=64))
    names.clear()
    matmul_widths.clear()
    engine.prefill(list(range(40)))
    layers, hidden = TINY.num_layers, TINY.hidden_size
    assert names["add_rmsnorm"] == 2 * layers - 1
    assert names["eltwise_add"] == 1
    assert names[f"rmsnorm_T40_1x{hidden}"] == 1  # layer 0's input norm
    assert names[f"rmsnorm_T8_1x{hidden}"] == 1  # the final norm of the last tile row
    # per GDN layer one projection of width z + b and a padded to a tile column each; none of b or a alone
    hv, v = TINY.gdn_num_v_heads, TINY.gdn_value_head_dim
    pad = -(-hv // 32) * 32
    assert matmul_widths[hv * v + 2 * pad] == len(TINY.gdn_layers)
    assert matmul_widths[hv] == 0
