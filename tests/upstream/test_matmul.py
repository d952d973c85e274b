"""tt-metal's multi-core matmul kernels (reader_bmm_8bank_output_tiles_partitioned.cpp, bmm.cpp and the
unary interleaved writer), unmodified from the pinned wheel, in the program the matmul multi-core
factory builds (ttprefill/ops/upstream/matmul.py), against an fp64 numpy matmul of the bf16 inputs.

The multi-core reuse program (reader/writer_bmm_tile_layout.cpp, bmm_large_block_zm.cpp) computes blocks
of output tiles per core, spilling partial sums to an intermediate CB between K blocks and reloading them;
its error bound is the same.

bf16 inputs at HiFi4 multiply exactly and DST accumulates in bf16 between k steps (bf16 DST, the
factory's default), so the result differs from fp64 by bf16 rounding of the partial sums: the error
bound is a few bf16 ulps relative to the output's rms."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import bf16
from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.ops.upstream.matmul import bmm_multicore_program, bmm_multicore_reuse_program
from ttprefill.reference.metrics import pcc, rel_rms

RNG = np.random.default_rng(11)


def run_bmm(sim, a, b, out_shape, grid, fidelity=MathFidelity.HiFi4):
    A = sim.upload(a, DataFormat.Float16_b)
    B = sim.upload(b, DataFormat.Float16_b)
    O = sim.allocate(out_shape, DataFormat.Float16_b)
    try:
        sim.run(bmm_multicore_program(A, B, O, grid=grid, fidelity=fidelity))
        return sim.download(O)
    finally:
        for t in (A, B, O):
            sim.free(t)


@pytest.mark.parametrize("grid", [(1, 1), (2, 3)])
def test_bmm_batched(sim, grid):
    a = bf16(RNG.standard_normal((2, 64, 96)).astype(np.float32))
    b = bf16(RNG.standard_normal((2, 96, 96)).astype(np.float32))
    out = run_bmm(sim, a, b, (2, 64, 96), grid)
    ref = a.astype(np.float64) @ b
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 6e-3


def test_bmm_broadcast_b(sim):
    # B of batch 1 is reused for every batch of A (the reader's bcast_B)
    a = bf16(RNG.standard_normal((3, 32, 64)).astype(np.float32))
    b = bf16(RNG.standard_normal((1, 64, 32)).astype(np.float32))
    out = run_bmm(sim, a, b, (3, 32, 32), (2, 2))
    ref = a.astype(np.float64) @ b
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 6e-3


def test_bmm_lofi_is_coarser(sim):
    a = bf16(RNG.standard_normal((1, 32, 128)).astype(np.float32))
    b = bf16(RNG.standard_normal((1, 128, 32)).astype(np.float32))
    ref = a.astype(np.float64) @ b
    hifi = rel_rms(ref, run_bmm(sim, a, b, (1, 32, 32), (1, 1)))
    lofi = rel_rms(ref, run_bmm(sim, a, b, (1, 32, 32), (1, 1), MathFidelity.LoFi))
    assert hifi < lofi < 0.05


@pytest.mark.parametrize("blocks", [dict(), dict(in0_block_w=2, out_subblock_w=2), dict(per_core_m=1, per_core_n=4,
                                                                                      out_subblock_h=1, out_subblock_w=2)])
def test_bmm_multicore_reuse(sim, blocks):
    a = bf16(RNG.standard_normal((2, 128, 128)).astype(np.float32))
    b = bf16(RNG.standard_normal((2, 128, 128)).astype(np.float32))
    A, B = sim.upload(a, DataFormat.Float16_b), sim.upload(b, DataFormat.Float16_b)
    O = sim.allocate((2, 128, 128), DataFormat.Float16_b)
    try:
        sim.run(bmm_multicore_reuse_program(A, B, O, **blocks))
        out = sim.download(O)
    finally:
        for t in (A, B, O):
            sim.free(t)
    ref = a.astype(np.float64) @ b
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 6e-3
