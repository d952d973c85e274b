"""The ops at the two ends of a bfp8 tensor-parallel collective (EngineOptions.collective_dtype), against fp64
references written from their contracts, the bfp8 values from the format's definition (tests/bfp8_reference.py):

    gather:  RMSNorm / add + RMSNorm writing the normed rows in bfp8 -> all_gather -> a projection reading a bfp8 in0
    reduce:  a projection writing its partial sums in bfp8 (fp32 accumulation) -> reduce_scatter -> the residual
             add (+ RMSNorm) reading a bfp8 y
"""

from __future__ import annotations

import numpy as np
import pytest

from bfp8_reference import bfp8_half_step, bfp8_reference
from simkit import bf16
from ttprefill.device.program import DataFormat
from ttprefill.ops.eltwise import residual_add
from ttprefill.ops.linear.linear import DenseWeight, linear
from ttprefill.ops.linear.shapes import LinearShapeError
from ttprefill.ops.norm import NormShapeError, NormWeight, add_rms_norm, rms_norm
from ttprefill.reference.metrics import pcc, rel_rms

BF16, BFP8, FP32 = DataFormat.Float16_b, DataFormat.Bfp8_b, DataFormat.Float32
EPS = 1e-6
RNG = np.random.default_rng(55)


def _norm_ref(s: np.ndarray, w: np.ndarray) -> np.ndarray:
    return s / np.sqrt(np.mean(s * s, axis=-1, keepdims=True) + EPS) * (1.0 + w.astype(np.float64))


def _assert_bfp8_of(out: np.ndarray, same_in_bf16: np.ndarray, ref: np.ndarray) -> None:
    """out holds bfp8 values (a fixed point of the rounding), each the packer's rounding to nearest of the kernel's
    DST value d: within half a bfp8 step of d, where d is within the bf16 output's error of the fp64 reference
    (plus half a bf16 ulp, the bf16 packer's own rounding of d)."""
    np.testing.assert_array_equal(bfp8_reference(out), out)
    half = np.maximum(bfp8_half_step(ref), bfp8_half_step(same_in_bf16))
    kernel = np.abs(same_in_bf16 - ref) + 2.0 ** -8 * np.abs(same_in_bf16)
    assert np.all(np.abs(out - ref) <= half + kernel)
    # the bfp8 rounding of a normed row (values ~1, 7 bits under the run's exponent) against the kernel's own error
    assert rel_rms(ref, out) <= 0.012 and rel_rms(ref, same_in_bf16) <= 0.005


@pytest.mark.parametrize("rows,width", [(64, 256), (40, 4096)])
def test_add_norm_reads_a_bfp8_sum_and_writes_bfp8_normed_rows(sim, rows, width):
    x = bf16(2 * RNG.standard_normal((rows, width)))
    y = bf16(2 * RNG.standard_normal((rows, width)))
    w = (0.2 * RNG.standard_normal(width)).astype(np.float32)
    s = bf16(x.astype(np.float64) + bfp8_reference(y))  # y as the bfp8 tensor holds it
    got = {}
    weight = NormWeight.upload(sim, w)
    try:
        for fmt in (BF16, BFP8):
            tx, ty, out = sim.upload(x, BF16), sim.upload(y, BFP8), sim.allocate((rows, width), fmt)
            try:
                add_rms_norm(sim, tx, ty, weight, EPS, out=out)
                np.testing.assert_array_equal(sim.download(tx), s)
                got[fmt] = sim.download(out)
            finally:
                for t in (tx, ty, out):
                    sim.free(t)
    finally:
        weight.free()
    _assert_bfp8_of(got[BFP8], got[BF16], _norm_ref(s.astype(np.float64), w))


def test_rms_norm_writes_bfp8(sim):
    x = bf16(3 * RNG.standard_normal((96, 512)))
    w = (0.2 * RNG.standard_normal(512)).astype(np.float32)
    got = {}
    weight = NormWeight.upload(sim, w)
    try:
        for fmt in (BF16, BFP8):
            tx, out = sim.upload(x, BF16), sim.allocate((96, 512), fmt)
            try:
                rms_norm(sim, tx, weight, EPS, out=out)
                got[fmt] = sim.download(out)
            finally:
                sim.free(tx)
                sim.free(out)
    finally:
        weight.free()
    _assert_bfp8_of(got[BFP8], got[BF16], _norm_ref(x.astype(np.float64), w))


def test_a_norm_refuses_an_output_format_it_cannot_write(sim):
    x, w = sim.upload(np.ones((32, 256), np.float32), BF16), NormWeight.upload(sim, np.zeros(256, np.float32))
    out = sim.allocate((32, 256), FP32)
    try:
        with pytest.raises(NormShapeError, match="Float16_b, Bfp8_b"):
            rms_norm(sim, x, w, EPS, out=out)
    finally:
        sim.free(x)
        sim.free(out)
        w.free()


def test_linear_reads_a_bfp8_in0(sim):
    """200 tokens, K 512 (4 K blocks), N 320, bf16 weights: against x as the bfp8 tensor holds it, the bounds of
    the bf16-in0 test (tests/ops/test_linear.py); against the bf16 x it came from, the bfp8 rounding shows."""
    x = bf16(RNG.standard_normal((200, 512)))
    w = (RNG.standard_normal((320, 512)) / np.sqrt(512)).astype(np.float32)
    tx, weight = sim.upload(x, BFP8), DenseWeight.upload(sim, w, BF16)
    try:
        out = sim.download(linear(sim, tx, weight))
    finally:
        sim.free(tx)
        weight.free()
    held = bfp8_reference(x)
    ref_held, ref_bf16 = held @ w.T.astype(np.float64), x.astype(np.float64) @ w.T.astype(np.float64)
    assert pcc(ref_held, out) >= 0.9999 and rel_rms(ref_held, out) <= 0.01
    assert rel_rms(ref_bf16, out) > rel_rms(ref_held, out)  # the input's rounding is the larger part
    assert rel_rms(ref_bf16, out) <= 0.02


def test_linear_writes_bfp8_partials_with_fp32_accumulation_only(sim):
    x = bf16(RNG.standard_normal((64, 1024)))
    w = (RNG.standard_normal((256, 1024)) / np.sqrt(1024)).astype(np.float32)
    tx, weight = sim.upload(x, BF16), DenseWeight.upload(sim, w, BF16)
    out = sim.allocate((64, 256), BFP8)
    try:
        with pytest.raises(LinearShapeError, match="fp32_acc"):
            linear(sim, tx, weight, out, out_format=BFP8)
        linear(sim, tx, weight, out, out_format=BFP8, fp32_acc=True)
        got = sim.download(out)
    finally:
        for t in (tx, out):
            sim.free(t)
        weight.free()
    ref = x.astype(np.float64) @ w.T.astype(np.float64)
    np.testing.assert_array_equal(bfp8_reference(got), got)
    # HiFi2 products and fp32 sums err far less than a bfp8 step; the one bfp8 rounding of the result dominates
    assert np.all(np.abs(got - ref) <= 3 * bfp8_half_step(ref) + 1e-3)
    assert pcc(ref, got) >= 0.9999


def test_residual_add_reads_a_bfp8_partial_sum(sim):
    x, y = bf16(RNG.standard_normal((64, 256))), bf16(RNG.standard_normal((64, 256)))
    tx, ty = sim.upload(x, BF16), sim.upload(y, BFP8)
    try:
        residual_add(sim, tx, ty, out=tx)
        np.testing.assert_array_equal(sim.download(tx), bf16(x.astype(np.float64) + bfp8_reference(y)))
    finally:
        sim.free(tx)
        sim.free(ty)
