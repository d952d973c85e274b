"""The two example programs (kernels/examples) on several cores, against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import bf16
from ttprefill.device.program import DataFormat, MathFidelity, Role
from ttprefill.ops import examples
from ttprefill.reference.metrics import pcc, rel_rms


@pytest.mark.parametrize("grid,shape,k_block", [((2, 2), (128, 192, 128), 2), ((4, 2), (128, 256, 256), 3),
                                                ((1, 1), (64, 64, 96), 1)])
def test_multicast_matmul(sim, grid, shape, k_block):
    m, k, n = shape
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    if (k // 32) % k_block:
        k_block = 1
    out = examples.matmul(sim, a, b, grid, k_block=k_block, fidelity=MathFidelity.HiFi4)
    ref = bf16(a).astype(np.float64) @ bf16(b).astype(np.float64)
    # HiFi4 on bf16 inputs with fp32 accumulation: only the bf16 output rounding remains.
    assert rel_rms(ref, out) < 4e-3
    np.testing.assert_allclose(out, ref, rtol=1e-2, atol=1e-2 * np.abs(ref).max())


def test_matmul_uses_multicast_and_is_deterministic(sim):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((128, 128)).astype(np.float32), rng.standard_normal((128, 128)).astype(np.float32)
    ta, tb = sim.upload(a, examples.DataFormat.Float16_b), sim.upload(b, examples.DataFormat.Float16_b)
    tc = sim.allocate((128, 128), examples.DataFormat.Float16_b)
    prog = examples.matmul_program(sim, ta, tb, tc, (2, 2), k_block=2)
    r1, r2 = sim.run(prog), sim.run(prog)
    assert r1.cycles == r2.cycles and r1.counters == r2.counters
    # Each A block is read from DRAM once per grid row and each B block once per grid column.
    tile = 2048
    assert r1.counters["dram_read_bytes"] == (16 + 16) * tile
    for t in (ta, tb, tc):
        sim.free(t)


@pytest.mark.parametrize("shape,cores", [((64, 96), 2), ((96, 256), 3)])
def test_row_softmax(sim, shape, cores):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(shape) * 3 - 2).astype(np.float32)
    out = examples.softmax(sim, x, cores)
    xr = bf16(x).astype(np.float64)
    e = np.exp(xr - xr.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    assert pcc(ref, out) > 0.9999
    np.testing.assert_allclose(out, ref, rtol=1e-2, atol=1e-3)


def test_row_softmax_reads_on_noc_0_and_writes_on_noc_1(sim):
    """As tt-metal's factories configure a reader and a writer on Wormhole (preferred NoC for DRAM reads: 0,
    for DRAM writes: 1)."""
    x, out = sim.allocate((64, 96), DataFormat.Float16_b), sim.allocate((64, 96), DataFormat.Float16_b)
    try:
        program = examples.softmax_program(sim, x, out, 2)
        assert {k.source.name: k.noc_index for k in program.kernels if k.role is not Role.COMPUTE} == {
            "softmax_reader.cpp": 0, "softmax_writer.cpp": 1}
    finally:
        sim.free(x)
        sim.free(out)
