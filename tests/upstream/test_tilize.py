"""tt-metal's tilize and untilize compute kernels (tilize.cpp, untilize.cpp with ttnn's kernel_lib
helpers), unmodified from the pinned wheel: row-major rows become 32x32 tiles of 16x16 faces and back.
Both move values without arithmetic, so the result must equal the input exactly: bf16 through bf16 DST,
and Float32 through fp32 DST with the input CB in UnpackToDestFp32 mode (the values skip srcA's TF32).

The factories' stick readers/writers are stood in for by tt-metal's page reader/writer over the same
bytes (see ttprefill/ops/upstream/tilize.py)."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import bf16
from ttprefill.device.program import DataFormat
from ttprefill.ops.upstream.tilize import from_row_major_bytes, row_major_bytes, tilize_program, untilize_program

RNG = np.random.default_rng(13)
BF16 = DataFormat.Float16_b


@pytest.mark.parametrize("shape,grid", [((32, 32), (1, 1)), ((2, 64, 96), (2, 1)), ((3, 32, 160), (2, 2))])
def test_tilize(sim, shape, grid):
    x = bf16(RNG.standard_normal(shape).astype(np.float32))
    src = sim.allocate(shape, BF16)
    dst = sim.allocate(shape, BF16)
    try:
        sim.write_pages(src, 0, row_major_bytes(x, BF16))
        sim.run(tilize_program(src, dst, grid=grid))
        out = sim.download(dst)
    finally:
        sim.free(src)
        sim.free(dst)
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("shape,grid", [((32, 32), (1, 1)), ((2, 64, 96), (3, 1)), ((3, 32, 160), (2, 2))])
def test_untilize(sim, shape, grid):
    x = bf16(RNG.standard_normal(shape).astype(np.float32))
    src = sim.upload(x, BF16)
    dst = sim.allocate(shape, BF16)
    try:
        sim.run(untilize_program(src, dst, grid=grid))
        out = from_row_major_bytes(sim.read_pages(dst, 0, dst.num_pages), BF16, shape)
    finally:
        sim.free(src)
        sim.free(dst)
    np.testing.assert_array_equal(out, x)


def test_row_major_bytes_round_trip():
    x = bf16(RNG.standard_normal((4, 8)).astype(np.float32))
    np.testing.assert_array_equal(from_row_major_bytes(row_major_bytes(x, BF16), BF16, x.shape), x)


@pytest.mark.parametrize("which", ["tilize", "untilize"])
def test_fp32_round_trip_exact(sim, which):
    fp32 = DataFormat.Float32
    x = RNG.standard_normal((2, 32, 96)).astype(np.float32)
    if which == "tilize":
        src, dst = sim.allocate(x.shape, fp32), sim.allocate(x.shape, fp32)
        sim.write_pages(src, 0, row_major_bytes(x, fp32))
    else:
        src, dst = sim.upload(x, fp32), sim.allocate(x.shape, fp32)
    try:
        sim.run((tilize_program if which == "tilize" else untilize_program)(src, dst, grid=(2, 1)))
        out = sim.download(dst) if which == "tilize" else from_row_major_bytes(
            sim.read_pages(dst, 0, dst.num_pages), fp32, x.shape)
    finally:
        sim.free(src)
        sim.free(dst)
    np.testing.assert_array_equal(out, x)
