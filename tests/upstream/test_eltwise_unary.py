"""tt-metal's eltwise unary SFPU kernel (eltwise_sfpu.cpp), unmodified from the pinned wheel, with the
SFPU_OP_CHAIN defines ttnn's unary factory generates (ttprefill/ops/upstream/eltwise.py), between
tt-metal's own interleaved reader and writer. Each op is checked against its definition in fp64 at
bf16 precision: PCC >= 0.999 and every element within two bf16 ulps (1/64 relative) of the reference.
The simulator computes these functions in fp32 and rounds DST and the output to bf16, so two ulps
covers the DST and pack roundings. The approximate gelu is checked against tt-llk's formula
(eltwise.gelu_lut), and that formula against the exact function; the fast exp is computed exactly."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import bf16
from ttprefill.device.program import DataFormat
from ttprefill.ops.upstream import eltwise
from ttprefill.reference.metrics import pcc

SINGLE = ["exp", "exp_approx", "gelu", "gelu_approx", "silu", "sqrt", "recip", "relu", "neg", "abs", "tanh", "log", "sin", "mul_scalar"]


def check(y: np.ndarray, ref: np.ndarray) -> None:
    assert pcc(ref, y) >= 0.999
    np.testing.assert_allclose(y, ref, rtol=1 / 64, atol=1e-6)


@pytest.mark.parametrize("name", SINGLE)
def test_unary_op_matches_its_definition(sim, name):
    op = eltwise.OPS[name]
    x = eltwise.sample_input(op, (64, 64), seed=3)
    y, report = eltwise.run_unary(sim, [op], x)
    check(y, eltwise.reference([op], x))
    assert report.cycles > 0


def test_the_approximate_gelu_formula_is_close_to_gelu():
    x = np.linspace(-4, 4, 4001)
    gelu = 0.5 * x * (1 + eltwise._erf(x / np.sqrt(2)))
    assert np.max(np.abs(eltwise.gelu_lut(x) - gelu)) < 0.025


def test_a_chain_of_two_ops_runs_both_in_order(sim):
    chain = [eltwise.OPS["neg"], eltwise.OPS["exp"]]
    x = eltwise.sample_input(chain[0], (32, 96), seed=4)
    y, _ = eltwise.run_unary(sim, chain, x)
    check(y, np.exp(-x.astype(np.float64)))


def test_fp32_input_runs_with_fp32_dest(sim):
    # Without preserve_fp32_precision the factory leaves c_0 in the default unpack mode, so copy_tile
    # goes through srcA, which keeps 10 mantissa bits (TF32, truncated); the SFPU then works in fp32.
    op = eltwise.OPS["sin"]
    x = np.random.default_rng(5).uniform(-3, 3, (32, 64)).astype(np.float32)
    y, _ = eltwise.run_unary(sim, [op], x, fmt=DataFormat.Float32)
    tf32 = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    np.testing.assert_allclose(y, np.sin(tf32.astype(np.float64)), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["relu_int32", "abs_int32"])
def test_int32_input_is_exact(sim, name):
    op = eltwise.OPS[name]
    x = np.random.default_rng(8).integers(-2**31 + 1, 2**31, (32, 64)).astype(np.int32)
    y, _ = eltwise.run_unary(sim, [op], x, fmt=DataFormat.Int32)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, op.reference(x.astype(np.int64)).astype(np.int32))


def test_typecast_float32_to_int32_truncates(sim):
    # values exact in TF32 (copy_tile passes srcA), both signs, and two that saturate
    x = np.float32(np.random.default_rng(9).integers(-2**10, 2**10, (32, 64))) * np.float32(2.0**-3)
    x[0, :2] = [3e9, -3e9]
    op = eltwise.typecast_op(DataFormat.Float32, DataFormat.Int32)
    y, _ = eltwise.run_unary(sim, [op], x, fmt=DataFormat.Float32, out_fmt=DataFormat.Int32)
    ref = np.clip(np.trunc(x.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int32)
    np.testing.assert_array_equal(y, ref)


def test_typecast_int32_to_bf16_rounds_to_nearest(sim):
    x = np.random.default_rng(10).integers(-2**30, 2**30, (32, 64)).astype(np.int32)
    op = eltwise.typecast_op(DataFormat.Int32, DataFormat.Float16_b)
    y, _ = eltwise.run_unary(sim, [op], x, fmt=DataFormat.Int32, out_fmt=DataFormat.Float16_b)
    np.testing.assert_array_equal(y, bf16(x.astype(np.float32)))


def test_work_split_over_cores_gives_the_same_result(sim):
    op = eltwise.OPS["exp"]
    x = eltwise.sample_input(op, (96, 96), seed=6)
    one, _ = eltwise.run_unary(sim, [op], x)
    four, _ = eltwise.run_unary(sim, [op], x, grid=(2, 2))
    np.testing.assert_array_equal(one, four)


def test_block_defines_mirror_the_factory():
    d = eltwise.block_defines([eltwise.OPS["exp"], eltwise.OPS["relu"]], DataFormat.Float16_b)
    assert d["SFPU_OP_CHAIN_0"] == "SFPU_OP_CHAIN_0_INIT_0 SFPU_OP_CHAIN_0_FUNC_0 SFPU_OP_CHAIN_0_INIT_1 SFPU_OP_CHAIN_0_FUNC_1"
    assert d["SFPU_OP_CHAIN_0_INIT_0"] == "exp_tile_init<0u>();"
    assert d["SFPU_OP_CHAIN_0_FUNC_1"] == "relu_tile(0);"
    assert d["SFPU_OP_EXP_INCLUDE"] == d["SFPU_OP_RELU_FAMILY_INCLUDE"] == d["INP_FLOAT"] == "1"
