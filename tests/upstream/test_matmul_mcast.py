"""tt-metal's 2D-multicast matmul (in0 multicast along rows from the left column, in1 down columns from the
top row, bmm_large_block_zm_fused_bias_activation.cpp computing), unmodified from the pinned wheel in the
program its factory builds (ttprefill/ops/upstream/matmul_mcast.py), against an fp64 numpy matmul of the
values as uploaded (bf16 in0, bf16 or bfp8 in1).

bf16 DST: partial sums round to bf16 between K blocks (packer L1 accumulation adds bf16 partials in L1),
so the error bound is a few bf16 ulps relative to the output's rms, as for the other matmuls."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill.device.program import DataFormat
from ttprefill.ops.upstream.matmul_mcast import matmul_mcast_2d_program
from ttprefill.reference.metrics import pcc, rel_rms

RNG = np.random.default_rng(23)


def run(sim, m, k, n, in1_format, out_format=DataFormat.Float16_b, **config):
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    A, B = sim.upload(a, DataFormat.Float16_b), sim.upload(b, in1_format)
    O = sim.allocate((m, n), out_format)
    try:
        ref = sim.download(A).astype(np.float64) @ sim.download(B).astype(np.float64)
        program = matmul_mcast_2d_program(sim, A, B, O, **config)
        run.last_program = program
        sim.run(program)
        return ref, sim.download(O)
    finally:
        for t in (A, B, O):
            sim.free(t)


@pytest.mark.parametrize("in1_format", [DataFormat.Float16_b, DataFormat.Bfp8_b], ids=["bf16", "bfp8"])
def test_mcast_2x2_packer_l1_acc(sim, in1_format):
    # 2 x 2 cores of 2 x 2 tiles, K = 8 tiles in 4 blocks: packer L1 accumulation is on (more than 2 blocks)
    ref, out = run(sim, 128, 256, 128, in1_format, per_core_m=2, per_core_n=2, in0_block_w=2,
                   out_subblock_h=1, out_subblock_w=2)
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 6e-3


def test_mcast_4x2_split_half_spill_reload(sim):
    # 4 columns x 2 rows: the factory's split of the receivers into two halves; K in 2 blocks, so the
    # partials spill and reload without L1 accumulation
    ref, out = run(sim, 128, 256, 256, DataFormat.Float16_b, per_core_m=2, per_core_n=2, in0_block_w=4,
                   out_subblock_h=2, out_subblock_w=2)
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 6e-3


def _out_cbs(program):
    """(index, aliases' indices) of the output CB's allocation and the partials CB's, on core (0, 0)."""
    return sorted((cb.index, tuple(a.index for a in cb.aliases)) for cb in program.circular_buffers if cb.index >= 4)


def test_mcast_output_blocks_split_the_per_core_block(sim):
    # 2 x 2 cores of 4 x 4 tiles in 2 x 2 output blocks of 2 x 2, K in 4 blocks: each output block walks K
    # again, and the partials live in the output CB's allocation (bf16 both) as the factory places them
    ref, out = run(sim, 256, 256, 256, DataFormat.Bfp8_b, per_core_m=4, per_core_n=4, in0_block_w=2,
                   out_subblock_h=2, out_subblock_w=1, out_block_h=2, out_block_w=2, packer_l1_acc=True)
    assert _out_cbs(run.last_program) == [(4, (5,))]
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 6e-3


def test_mcast_bfp8_output_keeps_partials_apart(sim):
    # bf16 partials (packer L1 accumulation) cannot share a bfp8 output's allocation
    ref, out = run(sim, 128, 256, 128, DataFormat.Bfp8_b, out_format=DataFormat.Bfp8_b, per_core_m=2,
                   per_core_n=2, in0_block_w=2, out_subblock_h=1, out_subblock_w=2)
    assert _out_cbs(run.last_program) == [(4, ()), (5, ())]
    # bfp8's 7-bit mantissas against a 16-value block exponent: ~1 % rms on top of the bf16 partials
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 1.5e-2
