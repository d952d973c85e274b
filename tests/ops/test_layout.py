"""Head relayouts (ops/layout) on the simulator: tiles copied exactly, against numpy reshapes."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill.device.program import DataFormat
from ttprefill.ops.layout import merge_heads, split_heads
from ttprefill.ops.layout.heads import HeadLayoutError

BF16 = DataFormat.Float16_b


def _bf16(a):
    """Values bf16 holds exactly (the copy must return them bit for bit)."""
    return (np.round(a * 8) / 8).astype(np.float32)


@pytest.mark.parametrize("tokens,heads,head_dim,stride,col0", [(40, 4, 64, 128, 64), (64, 3, 32, None, 32)])
def test_split_then_merge_heads(sim, tokens, heads, head_dim, stride, col0):
    rng = np.random.default_rng(3)
    stride_cols = head_dim if stride is None else stride
    width = col0 + heads * stride_cols
    x = _bf16(rng.standard_normal((tokens, width)))
    rows = 96  # more rows than the tokens' tiles: a query-block padded attention input
    src = sim.upload(x, BF16)
    dst = sim.allocate((heads, rows, head_dim), BF16)
    back = sim.allocate((tokens, heads * head_dim), BF16)
    try:
        split_heads(sim, src, dst, heads=heads, head_dim=head_dim, head_stride=stride, col0=col0)
        got = sim.download(dst)
        want = np.stack([x[:, col0 + h * stride_cols: col0 + h * stride_cols + head_dim] for h in range(heads)])
        np.testing.assert_array_equal(got[:, :tokens], want)
        merge_heads(sim, dst, back)
        np.testing.assert_array_equal(sim.download(back), want.transpose(1, 0, 2).reshape(tokens, -1))
    finally:
        for t in (src, dst, back):
            sim.free(t)


def test_split_heads_refuses_a_destination_too_small(sim):
    src = sim.allocate((64, 256), BF16)
    dst = sim.allocate((4, 32, 64), BF16)
    try:
        with pytest.raises(HeadLayoutError, match="dst must be"):
            split_heads(sim, src, dst, heads=4, head_dim=64)
    finally:
        sim.free(src), sim.free(dst)
