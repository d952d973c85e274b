"""add_rms_norm (kernels/norm/add_rmsnorm_*.cpp) against an fp64 numpy reference written from its contract:
the residual x + y rounded to bf16 (round to nearest, ties to even) in place in x, and the zero-centred
RMSNorm of that rounded sum, s / sqrt(mean(s^2) + eps) * (1 + w), in fp64. Shapes: partial tile rows,
the hidden widths of the tiny test model (256), Qwen3.5-9B (4096) and 27B (5120), several units per core,
a slice of x's rows. The modeled cycles against the residual add and the norm it replaces, as a bound."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill.device.program import DataFormat
from ttprefill.device.sim_device import SimDevice
from ttprefill.ops.eltwise import residual_add
from ttprefill.ops.norm import NormShapeError, NormWeight, add_rms_norm, rms_norm
from ttprefill.ops.norm.add_norm import plan_add_norm
from ttprefill.reference.metrics import pcc, rel_rms

BF16 = DataFormat.Float16_b
EPS = 1e-6


def bf16_round(a: np.ndarray) -> np.ndarray:
    """fp64/fp32 values rounded to bf16, nearest, ties to even (via fp32, exact for the sums of two bf16 values
    that matter here), returned as fp64."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def reference(x: np.ndarray, y: np.ndarray, w: np.ndarray, eps: float = EPS) -> tuple[np.ndarray, np.ndarray]:
    s = bf16_round(x.astype(np.float64) + y.astype(np.float64))
    norm = s / np.sqrt(np.mean(s * s, axis=-1, keepdims=True) + eps) * (1.0 + w.astype(np.float64))
    return s, norm


def _inputs(rng, rows, width, scale=2.0):
    x = bf16_round(scale * rng.standard_normal((rows, width))).astype(np.float32)
    y = bf16_round(scale * rng.standard_normal((rows, width))).astype(np.float32)
    w = (0.2 * rng.standard_normal(width)).astype(np.float32)
    return x, y, w


def _run(sim, x, y, w, *, x_row0=0, max_cores=None):
    tx, ty = sim.upload(x, BF16), sim.upload(y, BF16)
    weight = NormWeight.upload(sim, w)
    reports = []
    try:
        if max_cores is None:
            out = add_rms_norm(sim, tx, ty, weight, EPS, x_row0=x_row0, reports=reports)
        else:  # the program directly, with fewer cores than units
            from ttprefill.ops.norm.add_norm import add_norm_program

            out = sim.allocate(y.shape, BF16)
            plan = plan_add_norm(y.shape[0], y.shape[1], EPS, x_tile_row0=x_row0 // 32, max_cores=max_cores)
            reports.append(sim.run(add_norm_program(plan, tx, ty, weight.rows, out)))
        try:
            return sim.download(tx), sim.download(out), reports[0]
        finally:
            sim.free(out)
    finally:
        weight.free()
        sim.free(tx)
        sim.free(ty)


@pytest.mark.parametrize("rows,width", [(70, 256), (64, 4096), (40, 5120), (1, 256)],
                         ids=["tiny_partial_tile", "9b_hidden", "27b_hidden", "one_token"])
def test_add_norm_matches_fp64_reference(sim, rows, width):
    rng = np.random.default_rng(rows + width)
    x, y, w = _inputs(rng, rows, width)
    s_ref, norm_ref = reference(x, y, w)
    new_x, out, report = _run(sim, x, y, w)
    # the residual is exactly the rounded sum
    np.testing.assert_array_equal(new_x.astype(np.float64), s_ref)
    # the norm: s exact in fp32, fp32 sums and rsqrt, TF32 operands of the two products, one bf16 rounding
    assert out.shape == (rows, width)
    assert pcc(norm_ref, out) >= 0.9999
    assert rel_rms(norm_ref, out) <= 0.005
    assert report.cycles > 0


def test_several_units_per_core(sim):
    rng = np.random.default_rng(7)
    x, y, w = _inputs(rng, 5 * 32 - 3, 512)  # 5 tile rows (the last partial) on 2 cores: 3 + 2 units
    s_ref, norm_ref = reference(x, y, w)
    new_x, out, _ = _run(sim, x, y, w, max_cores=2)
    np.testing.assert_array_equal(new_x.astype(np.float64), s_ref)
    assert pcc(norm_ref, out) >= 0.9999
    assert rel_rms(norm_ref, out) <= 0.005


def test_a_slice_of_x(sim):
    # y covers x's rows 32..95: those rows take the sum, the rest of x keeps its values bit for bit
    rng = np.random.default_rng(8)
    x, _, w = _inputs(rng, 128, 256)
    y = bf16_round(2 * rng.standard_normal((64, 256))).astype(np.float32)
    s_ref, norm_ref = reference(x[32:96], y, w)
    new_x, out, _ = _run(sim, x, y, w, x_row0=32)
    np.testing.assert_array_equal(new_x[32:96].astype(np.float64), s_ref)
    np.testing.assert_array_equal(new_x[:32], x[:32])
    np.testing.assert_array_equal(new_x[96:], x[96:])
    assert pcc(norm_ref, out) >= 0.9999
    assert rel_rms(norm_ref, out) <= 0.005


def test_large_and_small_rows(sim):
    # rows of very different scale: each row's norm is its own (unit RMS after the norm, before 1 + w)
    rng = np.random.default_rng(9)
    x, y, w = _inputs(rng, 64, 256)
    x[:32] *= 1e3
    y[:32] *= 1e3
    x[32:] *= 1e-3
    y[32:] *= 1e-3
    x, y = bf16_round(x).astype(np.float32), bf16_round(y).astype(np.float32)
    s_ref, norm_ref = reference(x, y, w)
    new_x, out, _ = _run(sim, x, y, w)
    np.testing.assert_array_equal(new_x.astype(np.float64), s_ref)
    assert rel_rms(norm_ref, out) <= 0.005


def test_refusals_name_the_problem(sim):
    x = sim.allocate((96, 256), BF16)
    y = sim.allocate((40, 256), BF16)
    weight = NormWeight.upload(sim, np.zeros(256, np.float32))
    gated = NormWeight.upload(sim, np.ones(256, np.float32), zero_centred=False)
    narrow = NormWeight.upload(sim, np.zeros(128, np.float32))
    try:
        with pytest.raises(NormShapeError, match="multiple of 32"):
            add_rms_norm(sim, x, y, weight, EPS, x_row0=16)
        with pytest.raises(NormShapeError, match="end inside a tile row"):  # rows 0..39 of 96: a shared tile row
            add_rms_norm(sim, x, y, weight, EPS)
        with pytest.raises(NormShapeError, match="zero_centred|1 \\+ w"):
            add_rms_norm(sim, x, y, gated, EPS, x_row0=32)
        with pytest.raises(NormShapeError, match="128 entries"):
            add_rms_norm(sim, x, y, narrow, EPS, x_row0=32)
        with pytest.raises(NormShapeError, match="multiple of 32"):
            plan_add_norm(32, 100, EPS)
        before = sim.dram_bytes_in_use()
        with pytest.raises(NormShapeError, match="end inside a tile row"):
            add_rms_norm(sim, x, y, weight, EPS)
        assert sim.dram_bytes_in_use() == before  # the refused request's output was freed
    finally:
        for t in (x, y):
            sim.free(t)
        for wt in (weight, gated, narrow):
            wt.free()


def test_l1_plan_fits_every_hidden_width():
    from ttprefill.hw import L1_CB_BUDGET_BYTES
    from ttprefill.ops.norm.add_norm import fixed_l1_bytes

    for width in (256, 2048, 4096, 5120):
        plan = plan_add_norm(2048, width, EPS)
        w = width // 32
        assert w % plan.chunk == 0 and plan.chunk % plan.batch == 0
        streamed = 2 * 2 * plan.chunk * DataFormat.Float16_b.tile_bytes
        assert fixed_l1_bytes(width, plan.batch) + streamed <= L1_CB_BUDGET_BYTES
    with pytest.raises(NormShapeError, match="L1"):
        plan_add_norm(32, 32 * 1024, EPS)


def test_fused_cycles_below_the_two_ops_it_replaces():
    # timing only, 9B's hidden at a 2048-token chunk: the fused program against residual_add + rms_norm (modeled
    # cycles, deterministic). The fused one reads x and y once and no second copy of x, and only row 0 of the
    # weight rows: at least 25 % fewer bytes through DRAM, so well below the pair.
    device = SimDevice(timing_only=True)
    T, H = 2048, 4096
    x, y, h = (device.allocate((T, H), BF16) for _ in range(3))
    weight = NormWeight(device.allocate((32, H), DataFormat.Float32), H, True)
    separate, fused = [], []
    residual_add(device, x, y, out=x, reports=separate)
    rms_norm(device, x, weight, EPS, out=h, reports=separate)
    add_rms_norm(device, x, y, weight, EPS, out=h, reports=fused)
    pair = sum(r.cycles for r in separate)
    print(f"modeled cycles: residual_add {separate[0].cycles}, rms_norm {separate[1].cycles}, "
          f"add_rms_norm {fused[0].cycles}")
    assert fused[0].cycles <= 0.75 * pair
