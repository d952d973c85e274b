"""The dense planner's sub-block and K-block choices (ops/linear/planner.py), worked by hand from the tt-llk
unpack figures the timing model uses (docs/TIMING.md "Matmul": 64 B/cycle for both unpackers together, 2
cycles an UNPACR, 16 cycles a product per fidelity phase plus ~10 % in a loop, ~8 fixed cycles an LLK call),
their numerics against fp64, and their modeled cycles against the rule they replace."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.ops.linear import LinearShape, plan_linear
from ttprefill.ops.linear.linear import DenseWeight, linear
from ttprefill.ops.linear.planner import l1_bytes
from ttprefill.reference.metrics import pcc, rel_rms

BF16, BFP8 = DataFormat.Float16_b, DataFormat.Bfp8_b
LOFI, HIFI2 = MathFidelity.LoFi, MathFidelity.HiFi2


# T 2048 on 8 rows: per_core_m 8; N 5120 on 8 columns: per_core_n 20 (widths 1, 2, 4, 5 fit DST's 8 tiles).
# A bfp8 tile unpacks in 1088 / 64 + 2 = 19 cycles, a bf16 one in 2048 / 64 + 2 = 34. Per product, LoFi (17.6):
#   bfp8 x: 8 x 1 (one weight tile reused, eight x tiles streamed) (8 + 19 + 8 * 19) / 8 = 22.4;
#           1 x 5 (8 + 19 + 5 * 19) / 5 = 24.4; 2 x 4: 8 products of 17.6 + 8, then the next call's two x
#           tiles and first weight tile while the FPU waits, (148.8 + 8 + 38 + 19 - 17.6) / 8 = 24.5
#   bf16 x: 4 x 2 (two weight tiles reused, four x tiles each serving two products): the x tiles' arrival
#           and last two products 3 * 34 + 2 * 17.6 = 137.2 within the math's 148.8, then the refill
#           8 + 38 + 34 - 17.6 = 62.4: (148.8 + 62.4) / 8 = 26.4; 1 x 5 (8 + 34 + 5 * 19) / 5 = 27.4;
#           2 x 4 (148.8 + 8 + 68 + 19 - 17.6) / 8 = 28.3; 8 x 1 (8 + 19 + 8 * 34) / 8 = 37.4
# HiFi2 (35.2 a product): bfp8 x 8 x 1 math-bound (8 * 35.2 + 8) / 8 = 36.2 against 2 x 4's
# (289.6 + 8 + 38 + 19 - 35.2) / 8 = 39.9; bf16 x 1 x 5 (5 * 35.2 + 8) / 5 = 36.8 against 4 x 2's
# (289.6 + 8 + 38 + 34 - 35.2) / 8 = 41.8. Measured (timing model 2.4, central, K blocks of 8), bf16 x: LoFi
# 4 x 2 724.9k, 1 x 5 758.8k, 2 x 4 760.9k; HiFi2 1 x 5 940.2k, 1 x 4 947.9k, 4 x 2 1021.3k cycles.
@pytest.mark.parametrize("x_format, fidelity, subblock", [(BFP8, LOFI, (8, 1)), (BFP8, HIFI2, (8, 1)),
                                                          (BF16, LOFI, (4, 2)), (BF16, HIFI2, (1, 5))])
def test_subblock_by_unpack_cost(x_format, fidelity, subblock):
    plan = plan_linear(LinearShape(2048, 4096, 5120, BFP8, in0_format=x_format), fidelity=fidelity)
    assert (plan.per_core_m, plan.per_core_n) == (8, 20)
    assert (plan.out_subblock_h, plan.out_subblock_w) == subblock


def test_subblock_one_row_streams_the_weight():
    # per_core_n 16: bf16 x 1 x 8 (8 + 34 + 8 * 19) / 8 = 24.25 at LoFi, before 8 x 1's 37.4; with fp32 DST
    # (4 tiles) 1 x 4 (8 + 34 + 4 * 19) / 4 = 29.5 against 2 x 2's (78.4 + 8 + 68 + 19 - 17.6) / 4 = 39
    assert (lambda p: (p.out_subblock_h, p.out_subblock_w))(
        plan_linear(LinearShape(2048, 4096, 4096, BFP8), fidelity=LOFI)) == (1, 8)
    p = plan_linear(LinearShape(2048, 6144, 4096, BFP8, BFP8, fp32_acc=True), fidelity=LOFI)
    assert (p.out_subblock_h, p.out_subblock_w) == (1, 4)


def test_wide_k_block_only_where_it_costs_no_slab():
    shape = LinearShape(2048, 6144, 4096, BFP8, BFP8, fp32_acc=True)
    assert plan_linear(shape).in0_block_w == 8  # one slab either way
    # an L1 budget that holds two tile rows with K blocks of 4 but one with 8: 8 would double the slabs
    budget = l1_bytes(shape, 2, 16, 4)
    assert l1_bytes(shape, 2, 16, 8) > budget
    plan = plan_linear(shape, l1_budget=budget)
    assert (plan.in0_block_w, plan.per_core_m, plan.num_slabs) == (4, 2, 4)
    # K of 36 tiles: 8 does not divide it
    assert plan_linear(LinearShape(2048, 36 * 32, 4096, BFP8)).in0_block_w == 4


def test_column_subblock_with_bfp8_x_matches_fp64(sim):
    # a 2 x 2 grid: per_core_m 8 (512 tokens), per_core_n 5 (320 columns), so a bfp8 x takes 8 x 1 sub-blocks;
    # K of 16 tiles: two K blocks of 8 (the partials spilled and reloaded)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((512, 512)).astype(np.float32)
    w = (rng.standard_normal((320, 512)) / 22.6).astype(np.float32)
    plan = plan_linear(LinearShape(512, 512, 320, BFP8, in0_format=BFP8), grid=(2, 2), fidelity=LOFI)
    assert (plan.out_subblock_h, plan.out_subblock_w, plan.in0_block_w) == (8, 1, 8)
    weight = DenseWeight.upload(sim, w, BFP8)
    tx = sim.upload(x, BFP8)
    try:
        out_t = linear(sim, tx, weight, plan=plan)
        out = sim.download(out_t)
        sim.free(out_t)
        x_dev = sim.download(tx)  # the bfp8-rounded x the device multiplied
    finally:
        sim.free(tx)
        weight.free()
    ref = (torch.from_numpy(x_dev).double() @ torch.from_numpy(w).double().T).numpy()
    # bfp8 weights at LoFi (test_linear.py: pcc 0.99987, rel RMS 0.023 on a bf16 x)
    assert pcc(ref, out) >= 0.9995
    assert rel_rms(ref, out) <= 0.035


def test_modeled_cycles_below_the_area_first_rule():
    """At the 9B n300 chip's attention in-projection (bfp8 gathered x, LoFi) the planner's 8 x 1 sub-block and
    K blocks of 8 take fewer modeled cycles than the rule before (largest sub-block, wider first: 2 x 4, K
    blocks of 4): measured 664,563 against 704,659 (timing model 2.4, central)."""
    from ttprefill.device.sim_device import SimDevice

    shape = LinearShape(2048, 4096, 5120, BFP8, in0_format=BFP8)
    plan = plan_linear(shape, fidelity=LOFI)
    before = dataclasses.replace(plan, in0_block_w=4, out_subblock_h=2, out_subblock_w=4)
    device = SimDevice(timing_only=True)
    x = device.allocate((2048, 4096), BFP8)
    w = DenseWeight(device.allocate((4096, 5120), BFP8), 4096, 5120)
    cycles = []
    for p in (plan, before):
        reports = []
        device.free(linear(device, x, w, plan=p, reports=reports))
        cycles.append(sum(r.cycles for r in reports))
    assert cycles[0] <= 0.97 * cycles[1], cycles
