"""The timing model: deterministic modeled cycles, timing-only mode, traces, calibration bounds.

Modeled cycle counts are deterministic, so they can be asserted as bounds (a regression guard);
wall-clock time is never asserted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ttprefill import calibration
from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.device.sim_device import SimDevice
from ttprefill.device.trace import chrome_trace
from ttprefill.ops import examples
from ttprefill.bench import AttentionBenchArgs, DeviceChoice, GdnBenchArgs
from ttprefill.bench.gdn import gdn_bench
from ttprefill.bench.utilisation import utilisation



def _matmul_report(dev, size, fmt, fid, grid, k_block):
    a = np.random.default_rng(0).standard_normal((size, size)).astype(np.float32)
    ta, tb = dev.upload(a, fmt), dev.upload(a, fmt)
    tc = dev.allocate((size, size), DataFormat.Float16_b)
    try:
        return dev.run(examples.matmul_program(dev, ta, tb, tc, grid, k_block=k_block, fidelity=fid, fp32_dest=False))
    finally:
        for t in (ta, tb, tc):
            dev.free(t)


@pytest.mark.parametrize("size,grid,k_block", [(256, (2, 2), 2), (512, (4, 4), 4)])
def test_timing_only_gives_the_same_cycles_as_a_full_run(size, grid, k_block):
    full = _matmul_report(SimDevice(), size, DataFormat.Float16_b, MathFidelity.HiFi2, grid, k_block)
    fast = _matmul_report(SimDevice(timing_only=True), size, DataFormat.Float16_b, MathFidelity.HiFi2, grid, k_block)
    assert fast.cycles == full.cycles
    assert fast.cores == full.cores
    assert fast.counters == full.counters


def test_timing_only_softmax_matches_full_run():
    x = np.random.default_rng(1).standard_normal((64, 128)).astype(np.float32)
    reports = []
    for dev in (SimDevice(), SimDevice(timing_only=True)):
        tx, to = dev.upload(x, DataFormat.Float16_b), dev.allocate(x.shape, DataFormat.Float16_b)
        reports.append(dev.run(examples.softmax_program(dev, tx, to, 2)))
    assert reports[0].cycles == reports[1].cycles and reports[0].cores == reports[1].cores


def test_timing_only_matches_a_full_run_for_the_gdn_layer():
    """The benchmarks' GDN figures come from timing-only runs: on the 27B shape (fused scan with helper
    cores, both record paths: 3 chunks, some prepared by helpers) every program takes the same modeled
    cycles with and without the tile arithmetic. Nothing in these kernels branches on data."""
    runs = []
    for timing_only in (False, True):
        args = GdnBenchArgs(seq=192, qk_heads=16, v_heads=48, key_dim=128, value_dim=128, chunk=64, batch=1,
                            device=DeviceChoice(backend="sim", timing_only=timing_only))
        runs.append(gdn_bench(args)["programs"])
    assert "gdn_scan_fused" in runs[0] and runs[0] == runs[1]


def test_timing_only_matches_a_full_run_for_flash_attention():
    """The same for flash attention (GQA, a cached prefix, the K/V cache write). Its overflow guard reads
    row sums back: in a timing-only run they are zeros, so every step takes the fast path, as every step
    of these (realistic) inputs does in the full run; a step the guard rejects costs more than timing-only
    shows (tests/test_flash_attention.py exercises that path for values)."""
    from ttprefill.bench.attention import attention_bench

    cycles = [attention_bench(AttentionBenchArgs(
        seq=512, q_heads=8, kv_heads=2, head_dim=128, prefix=128, check="no" if timing_only else "auto",
        device=DeviceChoice(timing_only=timing_only)))["modeled_cycles"]
        for timing_only in (False, True)]
    assert cycles[0] == cycles[1]


def test_chrome_trace_has_every_core_and_role():
    dev = SimDevice(trace=True)
    report = _matmul_report(dev, 128, DataFormat.Float16_b, MathFidelity.HiFi2, (2, 2), 2)
    trace = json.loads(json.dumps(chrome_trace(report)))
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {(e["pid"], e["tid"]) for e in spans} >= {(p, 2) for p in range(4)}  # compute on all 4 cores
    assert any("matmul" in e["name"] for e in spans)
    assert any(e["name"].startswith("noc_semaphore_wait") for e in spans)  # receivers wait for multicasts
    assert max(e["ts"] + e["dur"] for e in spans) <= report.cycles / 1000.0 + 1e-9


def test_compute_pipelines_overlap_unpack_and_math():
    """A matmul-bound kernel runs near the FPU's rate: unpack and pack hide behind math."""
    report = _matmul_report(SimDevice(timing_only=True), 1024, DataFormat.Float16_b, MathFidelity.HiFi4, (4, 4), 4)
    m = utilisation(report, flops=2 * 1024 ** 3, cores=16, fidelity=MathFidelity.HiFi4)
    assert m["fpu_util"] > 0.6
    # The FPU pipeline's busy share is at least the useful FLOPs' share (it also counts the example's
    # partial-sum reloads); a matmul does no SFPU work; it moves bytes over the NoC (multicasts).
    assert m["pipeline_busy"]["fpu"] >= m["fpu_util"] - 1e-9
    assert m["sfpu_util"] == 0.0 and 0.0 < m["noc_util"] < 1.0 and 0.0 < m["dram_util"] < 1.0
    assert all(0.0 <= v <= 1.0 for v in m["pipeline_busy"].values())


@pytest.mark.parametrize("point", [p for p in calibration.POINTS if p.program == "noc"],
                         ids=lambda p: f"{p.shape['mode']}-{p.shape['count']}x{p.shape['bytes']}")
def test_data_movement_agrees_with_device_measurements(point):
    """Each data-movement calibration point (Wormhole's device-timed data-movement tests) within the band
    the model is held to (calibration.HELD_OUT_BAND) at the central setting. Held-out points test the
    model; the few it was derived from guard against drifting away from them."""
    report = calibration.run_noc(SimDevice(timing_only=True), point.shape)
    ratio = report.cycles / 1e9 / point.published_s
    low, high = calibration.HELD_OUT_BAND
    assert low <= ratio <= high, f"{point.shape}: modeled / measured = {ratio:.3f}"


def test_cost_settings_order_the_modeled_time():
    """Low, central and high cost settings give a band: more cost, more cycles, on a program that uses every
    uncertain cost (inits, LLK calls, matmul tiles, DRAM)."""
    cycles = [_matmul_report(SimDevice(timing_only=True, costs=c), 512, DataFormat.Bfp8_b, MathFidelity.HiFi2,
                             (4, 4), 4).cycles for c in ("low", "central", "high")]
    assert cycles[0] < cycles[1] < cycles[2], cycles
