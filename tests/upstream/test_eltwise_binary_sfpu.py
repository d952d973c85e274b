"""binary_ng's SFPU compute kernel (eltwise_binary_sfpu_no_bcast.cpp), unmodified from the pinned wheel,
in the factory's program (ttprefill/ops/upstream/eltwise.py: binary_sfpu_program): both tiles copied
into DST and combined by the SFPU op the factory names in BINARY_SFPU_OP. Float ops against fp64 within
two bf16 ulps (bf16) or fp32 precision (Float32, unpacked straight to DST); Int32 ops bit-exact."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import bf16
from ttprefill.device.program import DataFormat
from ttprefill.ops.upstream import eltwise

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "atan2"])
def test_float_binary_sfpu_op_in_bf16(sim, name):
    op = eltwise.BINARY_OPS[name]
    x = bf16(RNG.uniform(-4, 4, (64, 64)).astype(np.float32))
    y = bf16(RNG.uniform(0.5, 4, (64, 64)).astype(np.float32))
    out, report = eltwise.run_binary(sim, op, x, y)
    np.testing.assert_allclose(out, op.reference(x.astype(np.float64), y), rtol=1 / 64, atol=1e-6)
    assert report.cycles > 0


def test_float32_inputs_keep_fp32_precision(sim):
    op = eltwise.BINARY_OPS["div"]
    x = RNG.uniform(-4, 4, (32, 64)).astype(np.float32)
    y = RNG.uniform(0.5, 4, (32, 64)).astype(np.float32)
    out, _ = eltwise.run_binary(sim, op, x, y, fmt=DataFormat.Float32)
    np.testing.assert_allclose(out, x.astype(np.float64) / y, rtol=2e-7, atol=0)


@pytest.mark.parametrize("name", ["add_int32", "mul_int32"])
def test_int32_binary_sfpu_op_is_exact(sim, name):
    op = eltwise.BINARY_OPS[name]
    x = RNG.integers(-2**31, 2**31, (32, 96)).astype(np.int32)
    y = RNG.integers(-2**31, 2**31, (32, 96)).astype(np.int32)
    out, _ = eltwise.run_binary(sim, op, x, y, fmt=DataFormat.Int32, grid=(2, 1))
    np.testing.assert_array_equal(out, op.reference(x, y))
