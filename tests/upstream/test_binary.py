"""tt-metal's binary_ng element-wise kernels (kernels_ng reader/writer, eltwise_binary_no_bcast.cpp),
unmodified from the pinned wheel, in the program binary_ng's factory builds for two interleaved tiled
tensors (ttprefill/ops/upstream/binary.py), against numpy.

bf16 in, bf16 out: the FPU adds, subtracts and multiplies bf16 operands exactly into DST and the packer
rounds once, so the result equals numpy's fp64 result rounded to bf16, bit for bit. Float32 in and out
(fp32 DST): the unpacker hands the FPU TF32 operands (10 mantissa bits), so the result is within TF32
rounding of fp64 (relative error ~1e-3), not exact; that truncation is the hardware's (tt-metal's
unpack_dst_format for Float32 with fp32 DST is Tf32).

Broadcasts (B's column 0, row 0 or [0][0] over A): the compute kernel copies B through unary_bcast into a
broadcast tile and then runs the plain binary op, as binary_ng does with BCAST_LLK; bf16 stays exact."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import bf16
from ttprefill.device.program import DataFormat
from ttprefill.ops.upstream.binary import binary_ng_bcast_program, binary_ng_program
from ttprefill.reference.metrics import pcc, rel_rms

RNG = np.random.default_rng(5)
FNS = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def run_binary(sim, a, b, op, fmt, grid):
    A, B = sim.upload(a, fmt), sim.upload(b, fmt)
    out_shape = np.broadcast_shapes(a.shape, b.shape)
    O = sim.allocate(out_shape, fmt)
    try:
        sim.run(binary_ng_program(A, B, O, op, grid=grid))
        return sim.download(O)
    finally:
        for t in (A, B, O):
            sim.free(t)


@pytest.mark.parametrize("op", sorted(FNS))
def test_binary_bf16_exact(sim, op):
    a = bf16(RNG.standard_normal((2, 2, 64, 96)).astype(np.float32))
    b = bf16(RNG.standard_normal((2, 2, 64, 96)).astype(np.float32))
    out = run_binary(sim, a, b, op, DataFormat.Float16_b, (2, 2))
    np.testing.assert_array_equal(out, bf16(FNS[op](a.astype(np.float64), b).astype(np.float32)))


@pytest.mark.parametrize("b_shape", [(1, 2, 64, 64), (2, 1, 64, 64), (1, 1, 64, 64)])
def test_binary_batch_broadcast(sim, b_shape):
    # B of size 1 in N and/or C is read again for every batch of A (zero strides in the reader)
    a = bf16(RNG.standard_normal((2, 2, 64, 64)).astype(np.float32))
    b = bf16(RNG.standard_normal(b_shape).astype(np.float32))
    out = run_binary(sim, a, b, "mul", DataFormat.Float16_b, (3, 1))
    np.testing.assert_array_equal(out, bf16((a.astype(np.float64) * b).astype(np.float32)))


def test_binary_fp32_within_tf32(sim):
    a = RNG.standard_normal((1, 1, 64, 64)).astype(np.float32)
    b = RNG.standard_normal((1, 1, 64, 64)).astype(np.float32)
    out = run_binary(sim, a, b, "add", DataFormat.Float32, (1, 1))
    ref = a.astype(np.float64) + b
    assert pcc(ref, out) >= 0.99999
    assert rel_rms(ref, out) <= 2e-3


@pytest.mark.parametrize("op", sorted(FNS))
@pytest.mark.parametrize("bcast,b_shape", [("col", (64, 32)), ("row", (32, 96)), ("scalar", (32, 32))])
def test_binary_broadcast_b(sim, op, bcast, b_shape):
    a = bf16(RNG.standard_normal((64, 96)).astype(np.float32))
    b = bf16(RNG.standard_normal(b_shape).astype(np.float32))
    wide = {"col": np.repeat(b[:, :1], 96, axis=1), "row": np.repeat(b[:1, :], 64, axis=0),
            "scalar": np.full(a.shape, b[0, 0], np.float32)}[bcast]
    A, B = sim.upload(a, DataFormat.Float16_b), sim.upload(b, DataFormat.Float16_b)
    O = sim.allocate(a.shape, DataFormat.Float16_b)
    try:
        sim.run(binary_ng_bcast_program(A, B, O, op, bcast, grid=(2, 1)))
        out = sim.download(O)
    finally:
        for t in (A, B, O):
            sim.free(t)
    np.testing.assert_array_equal(out, bf16(FNS[op](a.astype(np.float64), wide).astype(np.float32)))


def test_binary_relu_in_the_packer(sim):
    # ttnn.add(a, b, activations=[relu]): the packer clamps negative results to zero (PACK_RELU)
    a = bf16(RNG.standard_normal((1, 1, 64, 64)).astype(np.float32))
    b = bf16(RNG.standard_normal((1, 1, 64, 64)).astype(np.float32))
    A, B = sim.upload(a, DataFormat.Float16_b), sim.upload(b, DataFormat.Float16_b)
    O = sim.allocate(a.shape, DataFormat.Float16_b)
    try:
        sim.run(binary_ng_program(A, B, O, "add", relu=True))
        out = sim.download(O)
    finally:
        for t in (A, B, O):
            sim.free(t)
    np.testing.assert_array_equal(out, bf16(np.maximum(a.astype(np.float64) + b, 0).astype(np.float32)))
