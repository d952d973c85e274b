"""tt-metal's generic reduce over W, H and H*W (reader_unary_reduce_universal_start_id.cpp or, for H,
the column-chunk reader reader_unary_transpose_wh_universal_input_cols_partitioned.cpp, reduce.cpp with ttnn's
kernel_lib reduce helper, the unary _metal2 writer), unmodified from the pinned wheel, in the program
ttprefill/ops/upstream/reduction.py mirrors, against numpy.

The FPU's row reduction adds the 32 bf16 values of a tile row into DST (bf16 without fp32_dest_acc_en)
tile by tile, so a SUM differs from fp64 by bf16 rounding of the partial sums: PCC >= 0.9999 and a
relative error of a few bf16 ulps; MAX is exact. The result lands in column 0 of each output tile and
the packer's reduce mask leaves the other columns zero.

REDUCE_SCALAR (over H and W) reduces a batch's tiles into element [0][0] of one tile: a SUM over many
tiles accumulates in bf16 DST, so its error grows with the tile count (bounded here by 2e-2 times the
root sum of squares of the inputs, for 12 tiles); MAX stays exact. The scaler (here 0.5 for SUM) multiplies each tile's partial result on the
FPU, exactly for a power of two."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import bf16
from ttprefill.device.program import DataFormat
from ttprefill.ops.upstream.reduction import reduce_h_program, reduce_hw_program, reduce_w_program
from ttprefill.reference.metrics import pcc, rel_rms

RNG = np.random.default_rng(17)


@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("grid", [(1, 1), (2, 1)])
def test_reduce_w(sim, op, grid):
    x = bf16(RNG.standard_normal((2, 64, 96)).astype(np.float32))
    src = sim.upload(x, DataFormat.Float16_b)
    dst = sim.allocate((2, 64, 32), DataFormat.Float16_b)
    try:
        sim.run(reduce_w_program(src, dst, op, grid=grid))
        out = sim.download(dst)
    finally:
        sim.free(src)
        sim.free(dst)
    ref = {"sum": np.sum, "max": np.max}[op](x.astype(np.float64), axis=-1)
    if op == "max":
        np.testing.assert_array_equal(out[..., 0], ref)
    else:
        assert pcc(ref, out[..., 0]) >= 0.9999
        assert rel_rms(ref, out[..., 0]) <= 1e-2
    np.testing.assert_array_equal(out[..., 1:], 0)


@pytest.mark.parametrize("op,scaler", [("sum", 0.5), ("max", 1.0)])
def test_reduce_hw(sim, op, scaler):
    x = bf16(RNG.standard_normal((2, 96, 128)).astype(np.float32))
    src = sim.upload(x, DataFormat.Float16_b)
    dst = sim.allocate((2, 32, 32), DataFormat.Float16_b)
    try:
        sim.run(reduce_hw_program(src, dst, op, scaler=scaler))
        out = sim.download(dst)
    finally:
        sim.free(src)
        sim.free(dst)
    ref = {"sum": np.sum, "max": np.max}[op](x.astype(np.float64), axis=(-2, -1)) * scaler
    if op == "max":
        np.testing.assert_array_equal(out[:, 0, 0], ref)
    else:
        assert np.all(np.abs(out[:, 0, 0] - ref) <= 2e-2 * np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=(-2, -1))))
    rest = out.copy()
    rest[:, 0, 0] = 0
    np.testing.assert_array_equal(rest, 0)


@pytest.mark.parametrize("op,scaler", [("sum", 0.5), ("max", 1.0)])
def test_reduce_h(sim, op, scaler):
    # 10 tile columns over 2 batches: the reader's chunks of 8 columns (DST's capacity) straddle batches
    x = bf16(RNG.standard_normal((2, 96, 160)).astype(np.float32))
    src = sim.upload(x, DataFormat.Float16_b)
    dst = sim.allocate((2, 32, 160), DataFormat.Float16_b)
    try:
        sim.run(reduce_h_program(src, dst, op, scaler=scaler))
        out = sim.download(dst)
    finally:
        sim.free(src)
        sim.free(dst)
    ref = {"sum": np.sum, "max": np.max}[op](x.astype(np.float64), axis=-2) * scaler
    if op == "max":
        np.testing.assert_array_equal(out[:, 0, :], ref)
    else:
        assert pcc(ref, out[:, 0, :]) >= 0.9999
        assert rel_rms(ref, out[:, 0, :]) <= 1e-2
    np.testing.assert_array_equal(out[:, 1:, :], 0)
