"""Partial RoPE in place (kernels/rope) against torch_ops.apply_partial_rope with
torch_ops.rope_cos_sin in fp64: Qwen3.5's head_dim 256 with 64 rotary dims, a wider rotary part, and
a chunk starting at a late position."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ttprefill.device.program import DataFormat
from ttprefill.model import torch_ops
from ttprefill.ops.rope import RopeShape, RopeShapeError, RopeTables, apply_rope
from ttprefill.reference.metrics import pcc, rel_rms


@pytest.mark.parametrize("tokens, heads, head_dim, rotary_dim, p0, theta", [
    (80, 3, 256, 64, 0, 1e7),  # Qwen3.5: a quarter of 256
    (64, 2, 128, 128, 7000, 1e4),  # the whole head, two tiles per half; positions deep into a context
    (40, 4, 64, 16, 130, 1e4),  # the tiny model: 16 of 64, halves of 8 inside the first tile
    (64, 3, 96, 32, 3000, 1e4),  # halves of 16: whole faces exchanged
])
def test_rope_matches_torch(sim, tokens, heads, head_dim, rotary_dim, p0, theta):
    rng = np.random.default_rng(head_dim)
    x = rng.standard_normal((tokens, heads * head_dim)).astype(np.float32)
    positions = np.arange(p0, p0 + tokens)
    tx = sim.upload(x, DataFormat.Float16_b)
    tables = RopeTables.upload(sim, positions, rotary_dim, theta)
    try:
        apply_rope(sim, tx, tables, heads=heads)
        out = sim.download(tx)
    finally:
        tables.free()
        sim.free(tx)
    cos, sin = torch_ops.rope_cos_sin(torch.from_numpy(positions), rotary_dim, theta, torch.float64)
    ref = torch_ops.apply_partial_rope(torch.from_numpy(x).double().reshape(tokens, heads, head_dim), cos, sin)
    ref = ref.reshape(tokens, heads * head_dim).numpy()
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 0.005
    # the pass-through dims are x as uploaded (bf16), untouched
    passthrough = out.reshape(tokens, heads, head_dim)[..., rotary_dim:]
    np.testing.assert_array_equal(passthrough, sim_round(x).reshape(tokens, heads, head_dim)[..., rotary_dim:])


@pytest.mark.parametrize("tokens, heads, head_dim, rotary_dim, p0, theta", [
    (70, 2, 256, 64, 384, 1e7),  # Qwen3.5's quarter, a chunk deep into resident tables
    (40, 3, 64, 16, 96, 1e4),  # the sub-tile rotation (16 of 64) reads its rows at the same offset
])
def test_rope_reads_its_rows_of_resident_tables(sim, tokens, heads, head_dim, rotary_dim, p0, theta):
    """Tables for positions 0..p0+tokens+40 made once; the chunk at p0 rotates with its own positions."""
    rng = np.random.default_rng(rotary_dim)
    x = rng.standard_normal((tokens, heads * head_dim)).astype(np.float32)
    tx = sim.upload(x, DataFormat.Float16_b)
    tables = RopeTables.upload(sim, np.arange(0, p0 + tokens + 40), rotary_dim, theta)
    try:
        apply_rope(sim, tx, tables, heads=heads, position=p0)
        out = sim.download(tx)
        with pytest.raises(RopeShapeError, match="multiple of 32"):
            apply_rope(sim, tx, tables, heads=heads, position=p0 + 8)
        with pytest.raises(RopeShapeError, match="outside the tables"):
            apply_rope(sim, tx, tables, heads=heads, position=p0 + 64)
    finally:
        tables.free()
        sim.free(tx)
    positions = np.arange(p0, p0 + tokens)
    cos, sin = torch_ops.rope_cos_sin(torch.from_numpy(positions), rotary_dim, theta, torch.float64)
    ref = torch_ops.apply_partial_rope(torch.from_numpy(x).double().reshape(tokens, heads, head_dim), cos, sin)
    ref = ref.reshape(tokens, heads * head_dim).numpy()
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 0.005


def sim_round(x):
    from ttprefill.device.formats import round_to_bf16

    return round_to_bf16(x)


def test_unsupported_rotary_dim_is_refused():
    with pytest.raises(RopeShapeError, match="multiple of 64.*one of \\(16, 32\\)"):
        RopeShape(32, 4, 64, 48)
