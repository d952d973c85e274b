"""tt-metal's own interleaved page readers and writers, unmodified from the pinned wheel, moving tiles
DRAM -> L1 -> DRAM: the bytes must come back identical, however the pages are split over cores."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import TEST_KERNELS, bf16
from test_dataflow_object_api import copied
from ttprefill.device.program import DataFormat
from ttprefill.ops.upstream.data_movement import (
    concat_width_program,
    copy_default_tilized_program,
    copy_interleaved_program,
    split_work_to_cores,
    unary_interleaved_program,
)

RNG = np.random.default_rng(2024)
X = RNG.standard_normal((96, 7 * 32)).astype(np.float32)  # 21 tiles: uneven over most grids


def roundtrip(sim, build, x, in_fmt, out_fmt, **kw):
    src = sim.upload(x, in_fmt)
    dst = sim.allocate(x.shape, out_fmt)
    try:
        sim.run(build(src, dst, **kw))
        return sim.download(dst)
    finally:
        sim.free(src)
        sim.free(dst)


def test_split_work_to_cores_matches_tt_metal():
    # 21 units over 4 cores: the first 21 % 4 = 1 core takes 6, the rest 5.
    assert [n for _, n in split_work_to_cores((2, 2), 21, row_major=True)] == [6, 5, 5, 5]
    assert [tuple(c) for c, _ in split_work_to_cores((2, 3), 6, row_major=False)] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert len(split_work_to_cores((8, 8), 3, row_major=True)) == 3


@pytest.mark.parametrize("fmt", [DataFormat.Float16_b, DataFormat.Float32, DataFormat.Bfp8_b])
@pytest.mark.parametrize("grid", [(1, 1), (3, 2)])
@pytest.mark.parametrize("backwards", [False, True])
def test_copy_op_reader_writer(sim, fmt, grid, backwards):
    src = sim.upload(X, fmt)
    dst = sim.allocate(X.shape, fmt)
    try:
        sim.run(copy_interleaved_program(src, dst, grid=grid, backwards=backwards))
        np.testing.assert_array_equal(sim.read_pages(dst, 0, dst.num_pages), sim.read_pages(src, 0, src.num_pages))
    finally:
        sim.free(src)
        sim.free(dst)


@pytest.mark.parametrize("in_fmt,out_fmt", [(DataFormat.Float16_b, DataFormat.Float16_b),
                                            (DataFormat.Float32, DataFormat.Float32),
                                            (DataFormat.Float16_b, DataFormat.Float32)])
@pytest.mark.parametrize("grid", [(1, 1), (2, 2)])
def test_unary_reader_writer_around_a_copy(sim, in_fmt, out_fmt, grid):
    """The eltwise unary factory's reader and writer around a copy compute kernel (tests/kernels)."""
    out = roundtrip(sim, unary_interleaved_program, X, in_fmt, out_fmt, grid=grid,
                    compute_source=TEST_KERNELS / "dfb_copy.cpp", fp32_dest_acc_en=True)
    np.testing.assert_array_equal(out, copied(X, in_fmt, out_fmt))


def test_unary_factory_with_upstream_compute_copies(sim):
    """eltwise_sfpu.cpp without SFPU_OP_CHAIN_0 is a plain copy."""
    out = roundtrip(sim, unary_interleaved_program, X, DataFormat.Float16_b, DataFormat.Float16_b, grid=(2, 2))
    np.testing.assert_array_equal(out, bf16(X))


@pytest.mark.parametrize("in_fmt,out_fmt", [(DataFormat.Float16_b, DataFormat.Float16_b),
                                            (DataFormat.Float32, DataFormat.Float32),
                                            (DataFormat.Float32, DataFormat.Float16_b)])
@pytest.mark.parametrize("grid", [(1, 1), (2, 3)])
def test_copy_metal2_program(sim, in_fmt, out_fmt, grid):
    """The Metal 2.0 copy factory: args::, dfb:: and tensor:: names from the generated headers."""
    out = roundtrip(sim, copy_default_tilized_program, X, in_fmt, out_fmt, grid=grid)
    # The same format: the pages are copied as they are; otherwise through the compute kernel's copy_tile.
    expected = (bf16(X) if in_fmt == DataFormat.Float16_b else X) if in_fmt == out_fmt else copied(X, in_fmt, out_fmt)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("widths", [(2, 3), (1, 1, 4)])
def test_concat_reader_with_a_tensor_binding_sequence(sim, widths):
    """tt-metal's Metal 2.0 concat reader, its inputs reached through the `inputs` binding sequence."""
    parts = [RNG.standard_normal((64, 32 * w)).astype(np.float32) for w in widths]
    srcs = [sim.upload(p, DataFormat.Float16_b) for p in parts]
    dst = sim.allocate((64, 32 * sum(widths)), DataFormat.Float16_b)
    try:
        sim.run(concat_width_program(srcs, dst))
        np.testing.assert_array_equal(sim.download(dst), bf16(np.concatenate(parts, axis=1)))
    finally:
        for t in (*srcs, dst):
            sim.free(t)
