"""The SFPI emulation (sim/include/sfpi.h) for raw SFPI code kernels carry (tt-metal's sdpa): dst_reg's
addressing of DST (an index is the even or odd columns of four rows of a face), the per-face drivers'
vector modes, and the v_if lane-mask stack. A test kernel runs each piece on DST (tests/kernels/sfpi_raw.cpp)."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import TEST_KERNELS, bf16, run_tile_op
from ttprefill.device.program import DataFormat

RNG = np.random.default_rng(7)
X = bf16(RNG.uniform(-3, 3, (32, 64)).astype(np.float32))
Y = bf16(RNG.uniform(-3, 3, (32, 64)).astype(np.float32))


def run(sim, test: int, a, b):
    return run_tile_op(sim, {"SFPI_TEST": str(test)}, a, b, in_format=DataFormat.Float16_b,
                       out_format=DataFormat.Float32, fp32_dest=True, compute=TEST_KERNELS / "sfpi_raw.cpp")


def test_binary_driver_max(sim):
    np.testing.assert_array_equal(run(sim, 1, X, Y), np.maximum(X, Y))


def test_first_column_walk_touches_even_columns_of_left_faces(sim):
    # 4 steps of 2 dst_reg units from each face start: rows 0-15 of the face, even columns; VectorMode::C
    # runs faces 0 and 2, so within each 32x32 tile columns 0, 2, .., 14 double and the rest stay.
    want = X.copy()
    cols = np.arange(64)
    even_left = (cols % 32 < 16) & (cols % 2 == 0)
    want[:, even_left] *= 2
    np.testing.assert_array_equal(run(sim, 2, X, Y), want)


def test_lane_mask_if_elseif_else(sim):
    want = np.where(X < 0, -X, np.where(X > 1, 1.0, X * 0.5)).astype(np.float32)
    np.testing.assert_array_equal(run(sim, 3, X, Y), want)
