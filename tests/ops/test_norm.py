"""Grouped RMSNorms (kernels/norm) against the torch reference ops of ttprefill/model/torch_ops.py in
fp64 of the unrounded inputs: the decoder norm, q_norm over q_proj's interleaved query/gate output,
and the GDN gated norm."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ttprefill.device.program import DataFormat
from ttprefill.model import torch_ops
from ttprefill.ops.norm import NormShape, NormShapeError, NormWeight, gated_rms_norm, rms_norm
from ttprefill.reference.metrics import pcc, rel_rms

BF16 = DataFormat.Float16_b
EPS = 1e-6


def _run(sim, fn, arrays, w, zero_centred=True):
    tensors = [sim.upload(a, BF16) for a in arrays]
    weight = NormWeight.upload(sim, w, zero_centred=zero_centred)
    reports = []
    try:
        out = fn(*tensors, weight, reports)
        try:
            return sim.download(out), reports[0]
        finally:
            sim.free(out)
    finally:
        weight.free()
        for t in tensors:
            sim.free(t)


def _t(a):
    return torch.from_numpy(np.asarray(a, np.float64))


def test_decoder_norm_zero_centred(sim):
    rng = np.random.default_rng(1)
    x = (3 * rng.standard_normal((70, 1024))).astype(np.float32)  # 70 tokens: a padded tile row
    w = (0.2 * rng.standard_normal(1024)).astype(np.float32)
    out, report = _run(sim, lambda tx, wt, r: rms_norm(sim, tx, wt, EPS, reports=r), [x], w)
    ref = torch_ops.zero_centred_rmsnorm(_t(x), _t(w), EPS).numpy()
    # bf16 x on the device, fp32 1 + w, fp32 sums, TF32 operands of the final products, one bf16 rounding of y
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 0.005
    assert report.cycles > 0


def test_q_norm_over_interleaved_query_and_gate(sim):
    # q_proj's output per head: query (D) then gate (D); q_norm reads the queries only, y holds them back to back
    T, H, D = 64, 3, 256
    rng = np.random.default_rng(2)
    qg = rng.standard_normal((T, H * 2 * D)).astype(np.float32)
    w = (0.2 * rng.standard_normal(D)).astype(np.float32)
    out, _ = _run(sim, lambda tx, wt, r: rms_norm(sim, tx, wt, EPS, group_width=D, group_stride=2 * D, reports=r),
                  [qg], w)
    q = _t(qg).reshape(T, H, 2 * D)[..., :D]
    ref = torch_ops.zero_centred_rmsnorm(q, _t(w), EPS).reshape(T, H * D).numpy()
    assert out.shape == (T, H * D)
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 0.005


def test_gdn_gated_norm(sim):
    T, HV, V = 96, 4, 128
    rng = np.random.default_rng(3)
    o = rng.standard_normal((T, HV * V)).astype(np.float32)
    z = (2 * rng.standard_normal((T, HV * V))).astype(np.float32)
    w = rng.uniform(0.5, 1.5, V).astype(np.float32)
    out, _ = _run(sim, lambda to, tz, wt, r: gated_rms_norm(sim, to, tz, wt, EPS, group_width=V, reports=r), [o, z], w,
                  zero_centred=False)
    ref = torch_ops.gated_rmsnorm(_t(o).reshape(T, HV, V), _t(z).reshape(T, HV, V), _t(w), EPS).reshape(T, HV * V)
    assert pcc(ref.numpy(), out) >= 0.9999
    assert rel_rms(ref.numpy(), out) <= 0.01


def test_bad_shapes_are_named():
    with pytest.raises(NormShapeError, match="multiple of 32"):
        NormShape(32, 100, 100)
    with pytest.raises(NormShapeError, match="past x's width"):
        NormShape(32, 512, 256, groups=2, group_stride=512)
    with pytest.raises(NormShapeError, match="overlap"):
        NormShape(32, 512, 256, groups=2, group_stride=128)
