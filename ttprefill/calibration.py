"""`ttprefill bench calibration`: the timing model against device-timed measurements of Wormhole.

Each point is a published figure measured on a Wormhole chip with the device profiler (never host
wall time: that adds dispatch and would flatter a model that is too slow), the program that reproduces
its workload here, and whether any constant of the model was derived from it. Agreement is claimed only
on the held-out points: the ones no constant was taken from. docs/calibration_sources.md has every
figure with its source; docs/TIMING.md the constants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ttprefill.device.program import (
    CircularBuffer,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
)

CALIBRATION_KERNELS = "calibration"
# Agreement the timing model must reach on every held-out point (modeled / published time).
HELD_OUT_BAND = (0.8, 1.25)


@dataclass(frozen=True)
class Point:
    """One device-timed figure and how to reproduce its workload on the simulator."""

    program: str  # which program runs it (a key of PROGRAMS)
    shape: dict
    source: str
    published_s: float
    held_out: bool = True  # False: a model constant was derived from this very figure
    note: str = ""


# ---------------------------------------------------------------- data movement (one core)

_GEMM = "tt-metal tech_reports/GEMM_FLOPS (n150, 8x8 grid, DRAM-interleaved in0/in1/out), device-based utilisation"
_QWEN = "tt-metal models/demos/blackhole/qwen36/tt (tp_common.py, model_config.py), device kernel duration, one chip of an N300"
_DM = "tt-metal tests/tt_metal/tt_metal/data_movement perf plots, wormhole_b0"

POINTS: list[Point] = [
    # One transaction from one core: latency plus one packet's transfer. The 32 B figures set the model's
    # DRAM and L1 latencies (timing.h), so they are not held out.
    Point("noc", {"mode": "dram_read", "bytes": 32, "count": 1}, f"{_DM}, DRAM Interleaved Packet Sizes", 384e-9, False),
    Point("noc", {"mode": "dram_read", "bytes": 2048, "count": 1}, f"{_DM}, DRAM Interleaved Packet Sizes", 463e-9),
    Point("noc", {"mode": "dram_read", "bytes": 8192, "count": 1}, f"{_DM}, DRAM Interleaved Packet Sizes", 871e-9),
    Point("noc", {"mode": "dram_read", "bytes": 65536, "count": 1}, f"{_DM}, DRAM Interleaved Packet Sizes", 3299e-9),
    Point("noc", {"mode": "dram_write", "bytes": 32, "count": 1}, f"{_DM}, DRAM Interleaved Packet Sizes (sender)", 401e-9),
    Point("noc", {"mode": "dram_write", "bytes": 65536, "count": 1}, f"{_DM}, DRAM Interleaved Packet Sizes (sender)",
          3479e-9),
    # Steady state: 256 transactions of 4 KiB at the measured 22.2 B/cycle (reads) and 21.6-22.0 (writes),
    # the figures the model takes as one core's DRAM ceiling (timing.h), so not held out either.
    Point("noc", {"mode": "dram_read", "bytes": 4096, "count": 256}, f"{_DM}, DRAM Interleaved Packet Sizes (steady state)",
          256 * 4096 / 22.2e9, False),
    Point("noc", {"mode": "dram_write", "bytes": 4096, "count": 256},
          f"{_DM}, DRAM Interleaved Packet Sizes (sender, steady state)", 256 * 4096 / 21.8e9, False),
    Point("noc", {"mode": "l1_write", "bytes": 32, "count": 1}, f"{_DM}, One to One Packet Sizes", 294e-9, False),
    Point("noc", {"mode": "l1_write", "bytes": 2048, "count": 1}, f"{_DM}, One to One Packet Sizes", 358e-9),
    Point("noc", {"mode": "l1_write", "bytes": 65536, "count": 1}, f"{_DM}, One to One Packet Sizes", 2402e-9),
    # Matmuls over the whole 8x8 grid. GEMM_FLOPS reports device utilisation u against ideal cycles
    # (M K N / 32^3) x (16 per fidelity phase) / 64 cores: device time = ideal / u at 1 GHz.
    Point("matmul_tt_metal", {"m": 4096, "k": 4096, "n": 4096, "in0": "bf16", "in1": "bf16", "fidelity": "HiFi2"},
          f"{_GEMM}, BF16 HiFi2 tuned, 59.50 %", 1762.3e-6),
    Point("matmul_tt_metal", {"m": 3072, "k": 4096, "n": 4096, "in0": "bf16", "in1": "bf16", "fidelity": "HiFi2"},
          f"{_GEMM}, BF16 HiFi2 tuned, 75.09 %", 1047.3e-6),
    Point("matmul_tt_metal", {"m": 4096, "k": 4096, "n": 4096, "in0": "bf16", "in1": "bf16", "fidelity": "HiFi4"},
          f"{_GEMM}, BF16 HiFi4 tuned, 83.21 %", 2520.3e-6),
    Point("matmul_tt_metal", {"m": 4096, "k": 4096, "n": 4096, "in0": "bfp8", "in1": "bfp8", "fidelity": "HiFi2"},
          f"{_GEMM}, BFP8 HiFi2 tuned, 79.43 %", 1320.1e-6),
    Point("matmul_tt_metal", {"m": 4096, "k": 4096, "n": 4096, "in0": "bfp8", "in1": "bfp8", "fidelity": "LoFi"},
          f"{_GEMM}, BFP8 LoFi out of box, 64.38 %", 814.4e-6),
    Point("matmul_tt_metal", {"m": 2048, "k": 4096, "n": 5120, "in0": "bf16", "in1": "bfp8", "fidelity": "HiFi2"},
          f"{_QWEN}, fused QKV in-projection, one K pass", 1011.5e-6),
    Point("matmul_tt_metal", {"m": 2048, "k": 2048, "n": 4096, "in0": "bf16", "in1": "bfp8", "fidelity": "HiFi2"},
          f"{_QWEN}, attention out-projection, one K pass", 517.2e-6),
]


# ---------------------------------------------------------------- programs

_FORMATS = {"bf16": DataFormat.Float16_b, "bfp8": DataFormat.Bfp8_b, "fp32": DataFormat.Float32}
_NOC_MODES = {"dram_read": 0, "dram_write": 1, "l1_write": 2}


def run_noc(device, shape: dict):
    """One core (0, 0) issues the transactions; an L1 write goes to core (1, 0)."""
    from ttprefill.device.jit import KERNELS_DIR

    size, count, mode = int(shape["bytes"]), int(shape["count"]), _NOC_MODES[shape["mode"]]
    page = DataFormat.Float32.tile_bytes
    # A transaction larger than a page reads consecutive pages of one bank: those lie back to back there.
    stride = 1 if size <= page else 0
    pages = max(count * stride, -(-size // page) * 12) + 12
    buffer = device.allocate((32, 32 * pages), DataFormat.Float32)
    core = CoreCoord(0, 0)
    cores = CoreRangeSet.of([core, CoreCoord(1, 0)]) if mode == 2 else CoreRangeSet.of([core])
    local = CircularBuffer(0, DataFormat.Float32, max(size, 32), 1, cores)
    target = device.worker_noc_coord(CoreCoord(1, 0))
    kernel = Kernel(KERNELS_DIR / CALIBRATION_KERNELS / "noc_transactions.cpp", Role.RISCV_0, CoreRangeSet.of([core]),
                    buffer.accessor_args(),
                    runtime_args={core: [buffer.address, size, count, mode, stride, *target, page]})
    try:
        return device.run(Program([kernel], [local], name=f"noc_{shape['mode']}_{count}x{size}"))
    finally:
        device.free(buffer)


# Sub-block shapes in the order tt-metal's matmul config helpers try them; with bf16 DST a sub-block holds
# at most 4 tiles, so the first one of at most 4 tiles that divides the per-core block is taken.
_SUBBLOCK_CHOICES = [(4, 2), (2, 4), (8, 1), (1, 8), (7, 1), (1, 7), (3, 2), (2, 3), (6, 1), (1, 6), (5, 1), (1, 5),
                     (2, 2), (4, 1), (1, 4), (3, 1), (1, 3), (2, 1), (1, 2), (1, 1)]


def tt_metal_matmul_config(m: int, k: int, n: int, in0: DataFormat, in1: DataFormat) -> dict:
    """The MatmulMultiCoreReuseMultiCastProgramConfig a GEMM_FLOPS-style run would use on the 8x8 grid:
    one output block of M/8 x N/8 tiles per core, the largest bf16-DST sub-block dividing it, and K blocks
    of 4 tiles, or 2 where 4 would not fit L1 here (the simulator keeps the output and partials CBs apart,
    which the device overlays; bf16 4096^3 is the case)."""
    from ttprefill.device.program import L1_BYTES, L1_RESERVED_BYTES

    per_core_m, per_core_n, kt = m // 32 // 8, n // 32 // 8, k // 32
    h, w = next((h, w) for h, w in _SUBBLOCK_CHOICES if h * w <= 4 and per_core_m % h == 0 and per_core_n % w == 0)
    out_bytes = 2 * per_core_m * per_core_n * DataFormat.Float16_b.tile_bytes  # output + partials (bf16)
    for block_w in (4, 2):
        inputs = 2 * block_w * (per_core_m * in0.tile_bytes + per_core_n * in1.tile_bytes)
        if kt % block_w == 0 and out_bytes + inputs <= L1_BYTES - L1_RESERVED_BYTES:
            break
    return dict(per_core_m=per_core_m, per_core_n=per_core_n, in0_block_w=block_w, out_subblock_h=h, out_subblock_w=w)


def run_matmul_tt_metal(device, shape: dict):
    """tt-metal's own 2D-multicast matmul (its kernels from the pinned wheel, in the program its factory
    builds: ttprefill/ops/upstream/matmul_mcast.py) on the 8x8 grid, bf16 DST, packer L1 accumulation on,
    with the config tt_metal_matmul_config picks for the shape."""
    from ttprefill.ops.upstream.matmul_mcast import matmul_mcast_2d_program

    m, k, n = int(shape["m"]), int(shape["k"]), int(shape["n"])
    in0, in1 = _FORMATS[shape["in0"]], _FORMATS[shape["in1"]]
    a = device.allocate((m, k), in0)
    b = device.allocate((k, n), in1)
    c = device.allocate((m, n), DataFormat.Float16_b)
    try:
        return device.run(matmul_mcast_2d_program(device, a, b, c, **tt_metal_matmul_config(m, k, n, in0, in1),
                                                  fidelity=MathFidelity[shape["fidelity"]], fp32_dest_acc_en=False,
                                                  packer_l1_acc=True))
    finally:
        for t in (a, b, c):
            device.free(t)


PROGRAMS: dict[str, tuple[str, Callable]] = {
    "noc": ("ttprefill kernels/calibration/noc_transactions.cpp (one core)", run_noc),
    "matmul_tt_metal": ("tt-metal's 2D multicast matmul kernels, its factory's program (8x8)", run_matmul_tt_metal),
}


@dataclass
class Result:
    point: Point
    modeled_s: float

    @property
    def ratio(self) -> float:
        return self.modeled_s / self.point.published_s


def calibrate(costs: str, progress: Callable[[str], None] | None = None) -> dict:
    """Run every point at one cost setting (timing only) and compare it with its published figure."""
    from ttprefill.device.sim_device import SimDevice, model_version

    device = SimDevice(timing_only=True, costs=costs)
    results = []
    for point in POINTS:
        if progress:
            progress(f"{point.program} {point.shape}")
        report = PROGRAMS[point.program][1](device, point.shape)
        results.append(Result(point, report.cycles / 1e9))
    held = [r.ratio for r in results if r.point.held_out]
    low, high = HELD_OUT_BAND
    return {
        "model_version": model_version(),
        "cost_setting": costs,
        "points": [
            {"program": PROGRAMS[r.point.program][0], "shape": r.point.shape, "source": r.point.source,
             "published_s": r.point.published_s, "modeled_s": r.modeled_s, "ratio": r.ratio,
             "held_out": r.point.held_out}
            for r in results
        ],
        "held_out_points": len(held),
        "held_out_ratio_min": min(held),
        "held_out_ratio_max": max(held),
        "held_out_within_band": all(low <= x <= high for x in held),
        "band": list(HELD_OUT_BAND),
    }


def bench_calibration(args) -> dict:
    from loguru import logger

    from ttprefill.bench import cost_setting

    return calibrate(cost_setting(args), progress=lambda what: logger.info("calibration: {}", what))
