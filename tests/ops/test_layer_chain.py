"""The dense ops chained on the device as the layer stack runs them, against the torch reference
model's math (ttprefill/model/reference_model.py, torch_ops.py) in fp64 of the same weights: the MLP
block with its residual, and an attention layer's projections up to the attention inputs (q, k with
their norms and RoPE, v) and after it (output gate, o_proj, residual). Activations stay on the device
between ops; only the inputs go down and the results come up."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ttprefill.device.program import DataFormat
from ttprefill.model import torch_ops
from ttprefill.ops.eltwise import residual_add, sigmoid_gate, silu_mul
from ttprefill.ops.linear.linear import DenseWeight, linear, split_query_gate
from ttprefill.ops.norm import NormWeight, rms_norm
from ttprefill.ops.rope import RopeTables, apply_rope
from ttprefill.reference.metrics import pcc, rel_rms

BF16, BFP8 = DataFormat.Float16_b, DataFormat.Bfp8_b
EPS = 1e-6
RNG = np.random.default_rng(31)


def _w(*shape, scale=None):
    scale = scale if scale is not None else 1.0 / np.sqrt(shape[-1])
    return (scale * RNG.standard_normal(shape)).astype(np.float32)


def _t(a):
    return torch.from_numpy(np.asarray(a, np.float64))


class Resident:
    """What a test puts on the device: weights (freed by their own free()) and tensors, all freed at the end."""

    def __init__(self, sim):
        self.sim, self.weights, self.tensors = sim, [], []

    def dense(self, w, fmt=BF16):
        self.weights.append(DenseWeight.upload(self.sim, w, fmt))
        return self.weights[-1]

    def norm(self, w):
        self.weights.append(NormWeight.upload(self.sim, w))
        return self.weights[-1]

    def keep(self, t):
        self.tensors.append(t)
        return t

    def free(self):
        for w in self.weights:
            w.free()
        for t in self.tensors:
            self.sim.free(t)


def test_mlp_block_with_residual(sim):
    T, H, I = 96, 256, 512
    x = (2 * RNG.standard_normal((T, H))).astype(np.float32)
    w_norm, w_gate, w_up, w_down = _w(H, scale=0.2), _w(I, H), _w(I, H), _w(H, I)
    r = Resident(sim)
    try:
        tx = r.keep(sim.upload(x, BF16))
        h = r.keep(rms_norm(sim, tx, r.norm(w_norm), EPS))
        gate = r.keep(linear(sim, h, r.dense(w_gate, BFP8)))
        up = r.keep(linear(sim, h, r.dense(w_up, BFP8)))
        act = r.keep(silu_mul(sim, gate, up))
        down = r.keep(linear(sim, act, r.dense(w_down, BFP8)))
        out = sim.download(residual_add(sim, tx, down, out=tx))
    finally:
        r.free()
    hn = torch_ops.zero_centred_rmsnorm(_t(x), _t(w_norm), EPS)
    ref = (_t(x) + (F.silu(hn @ _t(w_gate).T) * (hn @ _t(w_up).T)) @ _t(w_down).T).numpy()
    # bfp8 weights: the MLP's contribution carries their ~1% rounding; the residual dominates x + mlp(x)
    assert pcc(ref, out) >= 0.999
    assert rel_rms(ref, out) <= 0.02
    mlp_ref, mlp_out = ref - x, out - sim_round(x)
    assert pcc(mlp_ref, mlp_out) >= 0.998


def sim_round(x):
    from ttprefill.device.formats import round_to_bf16

    return round_to_bf16(x)


def test_attention_projections_norms_rope_and_output_gate(sim):
    T, H, Hq, Hkv, D, rot, theta, p0 = 64, 256, 2, 1, 256, 64, 1e7, 40
    x = RNG.standard_normal((T, H)).astype(np.float32)
    w_q, w_k, w_v, w_o = _w(Hq * 2 * D, H), _w(Hkv * D, H), _w(Hkv * D, H), _w(H, Hq * D)
    w_qn, w_kn = _w(D, scale=0.2), _w(D, scale=0.2)
    o = RNG.standard_normal((T, Hq * D)).astype(np.float32)  # stands in for the attention output
    positions = np.arange(p0, p0 + T)
    w_query, w_gate = split_query_gate(w_q, Hq, D)
    r = Resident(sim)
    try:
        tx = r.keep(sim.upload(x, BF16))
        tables = RopeTables.upload(sim, positions, rot, theta)
        r.weights.append(tables)
        q = apply_rope(sim, r.keep(rms_norm(sim, r.keep(linear(sim, tx, r.dense(w_query))), r.norm(w_qn), EPS,
                                            group_width=D)), tables, heads=Hq)
        k = apply_rope(sim, r.keep(rms_norm(sim, r.keep(linear(sim, tx, r.dense(w_k))), r.norm(w_kn), EPS,
                                            group_width=D)), tables, heads=Hkv)
        v = r.keep(linear(sim, tx, r.dense(w_v)))
        gate = r.keep(linear(sim, tx, r.dense(w_gate)))
        to = r.keep(sim.upload(o, BF16))
        gated = r.keep(sigmoid_gate(sim, to, gate))
        y = r.keep(residual_add(sim, tx, r.keep(linear(sim, gated, r.dense(w_o)))))
        got = {name: sim.download(t) for name, t in (("q", q), ("k", k), ("v", v), ("y", y))}
    finally:
        r.free()

    # reference_model._attention_layer's math, fp64
    xt = _t(x)
    q_and_gate = (xt @ _t(w_q).T).reshape(T, Hq, 2 * D)
    q_ref, gate_ref = q_and_gate[..., :D], q_and_gate[..., D:]
    k_ref = (xt @ _t(w_k).T).reshape(T, Hkv, D)
    v_ref = (xt @ _t(w_v).T).reshape(T, Hkv, D)
    q_ref = torch_ops.zero_centred_rmsnorm(q_ref, _t(w_qn), EPS)
    k_ref = torch_ops.zero_centred_rmsnorm(k_ref, _t(w_kn), EPS)
    cos, sin = torch_ops.rope_cos_sin(torch.from_numpy(positions), rot, theta, torch.float64)
    q_ref = torch_ops.apply_partial_rope(q_ref, cos, sin)
    k_ref = torch_ops.apply_partial_rope(k_ref, cos, sin)
    o_gated = _t(o).reshape(T, Hq, D) * torch.sigmoid(gate_ref)
    y_ref = xt + o_gated.reshape(T, Hq * D) @ _t(w_o).T
    for name, ref in (("q", q_ref), ("k", k_ref), ("v", v_ref), ("y", y_ref)):
        ref = ref.reshape(T, -1).numpy()
        assert pcc(ref, got[name]) >= 0.999, name
        assert rel_rms(ref, got[name]) <= 0.02, name


def test_final_norm_and_lm_head_of_the_last_token(sim):
    # 75 tokens: the last sits in tile row 2, row 10; only that tile row is normed and projected
    T, H, V = 75, 256, 1000
    x = (2 * RNG.standard_normal((T, H))).astype(np.float32)
    w_norm, w_head = _w(H, scale=0.2), _w(V, H)
    from ttprefill.ops.linear.linear import ChunkedDenseWeight, linear_chunked

    r = Resident(sim)
    head = ChunkedDenseWeight.upload(sim, w_head, BFP8, chunk_columns=512)
    try:
        tx = r.keep(sim.upload(x, BF16))
        h = r.keep(rms_norm(sim, tx, r.norm(w_norm), EPS, last_tile_row_only=True))
        assert h.shape == (T - 64, H)
        logits = np.concatenate([sim.download(r.keep(o))[-1] for o in linear_chunked(sim, h, head)])
    finally:
        head.free()
        r.free()
    ref = (torch_ops.zero_centred_rmsnorm(_t(x[-1:]), _t(w_norm), EPS) @ _t(w_head).T)[0].numpy()
    assert logits.shape == (V,)
    assert pcc(ref, logits) >= 0.999
