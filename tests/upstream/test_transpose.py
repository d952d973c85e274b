"""tt-metal's transpose WH compute kernel (transpose_wh.cpp), unmodified from the pinned wheel: every
32x32 tile goes through the unpacker's transpose into DST and back out. A transpose moves values
without arithmetic, so the result must equal the input's transpose exactly, in bf16 (values already
bf16) and in fp32 (the factory turns on fp32 DST, and Float32 tiles reach DST unchanged).

The factory's own reader needs Metal 2.0 named bindings (see ttprefill/ops/upstream/transpose.py); the
input's tiles are laid out in the order that reader visits them, and tt-metal's plain page reader
streams them."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import bf16
from ttprefill.device.program import DataFormat
from ttprefill.ops.upstream.transpose import nwh_tile_order, transpose_wh_program

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("fmt", [DataFormat.Float16_b, DataFormat.Float32])
@pytest.mark.parametrize("grid", [(1, 1), (2, 2)])
def test_transpose_wh(sim, fmt, grid):
    x = RNG.standard_normal((2, 64, 96)).astype(np.float32)
    if fmt == DataFormat.Float16_b:
        x = bf16(x)
    src = sim.upload(nwh_tile_order(x), fmt)
    dst = sim.allocate((2, 96, 64), fmt)
    try:
        report = sim.run(transpose_wh_program(src, dst, grid=grid))
        out = sim.download(dst)
    finally:
        sim.free(src)
        sim.free(dst)
    np.testing.assert_array_equal(out, np.swapaxes(x, -1, -2))
    assert report.cycles > 0


def test_nwh_tile_order_walks_columns():
    # tile (h, w) of a 2x3-tile matrix lands at slot w * 2 + h of the row-major tile sequence
    t = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = np.kron(t, np.ones((32, 32), np.float32))
    y = nwh_tile_order(x)
    slots = y.reshape(2, 32, 3, 32)[:, 0, :, 0].reshape(-1)
    np.testing.assert_array_equal(slots, [0, 3, 1, 4, 2, 5])
