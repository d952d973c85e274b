"""`ttprefill bench calibration`: the timing model against device-timed measurements of Wormhole.

Each point is a published figure measured on a Wormhole chip with the device profiler (never host
wall time: that adds dispatch and would flatter a model that is too slow), the program that reproduces
its workload here, and whether any constant of the model was derived from it. Agreement is claimed only
on the held-out points: the ones no constant was taken from. docs/calibration_sources.md has every
figure with its source; docs/TIMING.md the constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

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
from ttprefill.hw import DST_TILES_BF16, TILE
from ttprefill.ops.linear.weight_formats import FORMATS as WEIGHT_FORMATS

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
    # What the figure times, and so what of the run is compared with it: "kernel", tt-metal's DEVICE
    # KERNEL DURATION (first kernel start to last kernel end over all cores: the run's cycles); "math",
    # the mean over cores of the TRISC1 (math) kernel's duration, which GEMM_FLOPS' device utilisation
    # divides by (the compute kernel's end on each core here, its pack trailing math by a tile at most).
    metric: str = "kernel"


# ---------------------------------------------------------------- data movement (one core)

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
]


# ---------------------------------------------------------------- programs

# the calibration points' tensor formats: the weight formats' names (their one home) and fp32
_FORMATS = {**WEIGHT_FORMATS, "fp32": DataFormat.Float32}
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
                    runtime_args={core: [buffer.address, size, count, mode, stride, *target, page, 0]})
    try:
        return device.run(Program([kernel], [local], name=f"noc_{shape['mode']}_{count}x{size}"))
    finally:
        device.free(buffer)


# ---------------------------------------------------------------- many cores against the 12 DRAM channels

_DRAM_TILE = ("tt-isa-documentation WormholeB0/DRAMTile/README.md, Performance: Tensix tiles each moving 1 MiB to or "
              "from one GDDR6 channel at once, tiles paired with the 12 channels at random (an equal number per channel)")
DRAM_STREAM_BYTES = 1 << 20  # what each core moves in those measurements
DRAM_STREAM_TRANSACTION = 4096  # bytes a transaction (at and above 2 KiB every size streams at the link rate)


def _dram_stream_point(cores: int, mode: str, noc: int, measured_gb_s: float) -> Point:
    """Aggregate speed = all cores' bytes / the time until the last is done, so the time is bytes / speed.
    Static VC allocation (what tt-metal's writes use: NOC_UNICAST_WRITE_VC with NOC_CMD_VC_STATIC)."""
    shape = {"cores": cores, "mode": mode, "noc": noc, "pairing": "random", "seed": 0}
    what = "L1 to DRAM (write)" if mode == "dram_write" else "DRAM to L1 (read)"
    return Point("dram_stream", shape, f"{_DRAM_TILE}: {cores} tiles, {what}, static VC, NoC {noc}, "
                 f"{measured_gb_s} GB/s", cores * DRAM_STREAM_BYTES / (measured_gb_s * 1e9))


# The 48-tile rows. With 12 tiles (one a channel) the figure depends on the one random pairing measured,
# which is not given: over pairings the model's time moves by up to 3x, so those rows are no points.
POINTS += [
    _dram_stream_point(48, "dram_write", 0, 52.3),
    _dram_stream_point(48, "dram_write", 1, 133.7),
    _dram_stream_point(48, "dram_read", 0, 200.3),
    _dram_stream_point(48, "dram_read", 1, 78.2),
]


def random_dram_pairing(cores: int, seed: int) -> list[tuple[CoreCoord, int]]:
    """`cores` distinct cores of the 8x8 grid drawn at random, each given a DRAM bank so that every one of
    the 12 banks gets the same number of cores (the measurement's "randomly chosen", done fairly)."""
    import random

    from ttprefill.hw import DRAM_BANKS

    if cores % DRAM_BANKS or not 0 < cores <= GRID[0] * GRID[1]:
        raise ValueError(f"dram_stream: {cores} cores cannot share the {DRAM_BANKS} banks equally on the 8x8 grid; "
                         f"give a multiple of {DRAM_BANKS} up to {GRID[0] * GRID[1]}")
    rng = random.Random(seed)
    picked = rng.sample([CoreCoord(x, y) for y in range(GRID[1]) for x in range(GRID[0])], cores)
    banks = [b for b in range(DRAM_BANKS) for _ in range(cores // DRAM_BANKS)]
    rng.shuffle(banks)
    return list(zip(picked, banks))


def run_dram_stream(device, shape: dict):
    """Each core moves DRAM_STREAM_BYTES to or from its bank in transactions of DRAM_STREAM_TRANSACTION
    (consecutive pages of that bank), all cores at once, on the point's NoC; then waits on its barrier."""
    from ttprefill.device.jit import KERNELS_DIR
    from ttprefill.hw import DRAM_BANKS

    pairs = random_dram_pairing(int(shape["cores"]), int(shape["seed"]))
    mode, noc = _NOC_MODES[shape["mode"]], int(shape["noc"])
    page = DataFormat.Float32.tile_bytes
    if page != DRAM_STREAM_TRANSACTION:
        raise ValueError(f"dram_stream: the buffer's page ({page} B) must be one transaction")
    count = DRAM_STREAM_BYTES // page
    per_bank = len(pairs) // DRAM_BANKS
    buffer = device.allocate((32, 32 * count * len(pairs)), DataFormat.Float32)
    cores = CoreRangeSet.of([c for c, _ in pairs])
    local = CircularBuffer(0, DataFormat.Float32, page, 1, cores)
    runtime_args, seen = {}, {}
    for core, bank in pairs:
        slot = seen.get(bank, 0)
        seen[bank] = slot + 1
        # Pages bank, bank + 12, ... lie back to back in that bank; each core of the bank takes its own run.
        runtime_args[core] = [buffer.address, page, count, mode, DRAM_BANKS, 0, 0, page,
                              bank + DRAM_BANKS * count * slot]
    assert all(v == per_bank for v in seen.values())
    kernel = Kernel(KERNELS_DIR / CALIBRATION_KERNELS / "noc_transactions.cpp", Role.RISCV_0, cores,
                    buffer.accessor_args(), runtime_args=runtime_args, noc=noc)
    try:
        return device.run(Program([kernel], [local], name=f"dram_stream_{shape['mode']}_{len(pairs)}_noc{noc}"))
    finally:
        device.free(buffer)

# ---------------------------------------------------------------- matmuls (tt-metal's 2D multicast, 8x8)

_GEMM = ("tt-metal tech_reports/GEMM_FLOPS @06bd3735, N150 manually tuned, DRAM in0/in1/out, no trace, device-based "
         "utilisation (ideal cycles / mean TRISC1 kernel duration)")
_QWEN = "tt-metal models/demos/blackhole/qwen36/tt (tp_common.py, model_config.py), device kernel duration"
GRID = (8, 8)
# Output sub-block shapes in the order tt-metal's GEMM_FLOPS benchmark tries them (its SUBBLOCK_HW_CHOICES):
# the first that divides the output block is taken; all of them fit bf16 DST's 8 tiles.
_SUBBLOCK_CHOICES = [(4, 2), (2, 4), (8, 1), (1, 8), (7, 1), (1, 7), (3, 2), (2, 3), (6, 1), (1, 6), (5, 1), (1, 5),
                     (2, 2), (4, 1), (1, 4), (3, 1), (1, 3), (2, 1), (1, 2), (1, 1)]
# bf16 DST (fp32_dest_acc_en off): the Qwen demo's sub-block budget (hw.py).
_DST_TILES_BF16 = DST_TILES_BF16


def gemm_flops_config(m: int, k: int, n: int, in0_block_w_div: int, out_blocks_h: int, out_blocks_w: int) -> dict:
    """The MatmulMultiCoreReuseMultiCastProgramConfig GEMM_FLOPS' tuned benchmark builds for a shape
    (tests/ttnn/unit_tests/benchmarks/test_benchmark.py, test_matmul_2d_host_perf, at the report's
    version): its table row gives the in0 block divisor and how many output blocks split the per-core
    block; the sub-block is the first of its choices dividing the output block."""
    per_core_m, per_core_n = m // GRID[1] // TILE, n // GRID[0] // TILE
    out_block_h, out_block_w = per_core_m // out_blocks_h, per_core_n // out_blocks_w
    h, w = next((h, w) for h, w in _SUBBLOCK_CHOICES if out_block_h % h == 0 and out_block_w % w == 0)
    return dict(per_core_m=per_core_m, per_core_n=per_core_n, in0_block_w=k // GRID[0] // TILE // in0_block_w_div,
                out_block_h=out_block_h, out_block_w=out_block_w, out_subblock_h=h, out_subblock_w=w)


def kpass1_config(m: int, k: int, n: int) -> dict:
    """The Qwen demo's one-K-pass prefill config on Wormhole (tp_common.py
    create_prefill_kpass1_matmul_program_config on the 8x8 prefill grid): one output block per core, in0
    blocks of min(4, K tiles / 8), a 1 x w sub-block with w the widest divisor of per_core_N within 8."""
    per_core_m, per_core_n = -(-m // TILE // GRID[1]), -(-n // TILE // GRID[0])
    w = next(w for w in range(min(per_core_n, _DST_TILES_BF16), 0, -1) if per_core_n % w == 0)
    return dict(per_core_m=per_core_m, per_core_n=per_core_n, in0_block_w=min(4, max(1, k // TILE // GRID[0])),
                out_block_h=per_core_m, out_block_w=per_core_n, out_subblock_h=1, out_subblock_w=w)


def _gemm_point(m, k, n, dtype: str, fidelity: str, row: tuple[int, int, int], utilisation_pct: float) -> Point:
    """A GEMM_FLOPS row: device time = ideal cycles / utilisation at 1 GHz, with ideal cycles
    (M K N / 32^3) x (16 per fidelity phase) / 64 cores (the report's formula)."""
    ideal_cycles = m * k * n / TILE**3 * 16 * MathFidelity[fidelity].phases / (GRID[0] * GRID[1])
    shape = {"m": m, "k": k, "n": n, "in0": dtype, "in1": dtype, "out": dtype, "fidelity": fidelity,
             "config": gemm_flops_config(m, k, n, *row)}
    return Point("matmul_tt_metal", shape, f"{_GEMM}, {dtype.upper()} {fidelity}, {utilisation_pct} %",
                 ideal_cycles / (utilisation_pct / 100) / 1e9, metric="math")


def _qwen_point(m, k, n, what: str, published_us: float, in0: str = "bf16", fidelity: str = "HiFi2") -> Point:
    """The demo's projections pass no output dtype on the 9B, so ttnn gives the output the activation's
    (matmul's output_dtype.value_or(input_tensor_a.dtype())): bf16 after a bf16 activation, bfp8 after
    the bfp8 SDPA (docs/calibration_sources.md 1b)."""
    shape = {"m": m, "k": k, "n": n, "in0": in0, "in1": "bfp8", "out": in0, "fidelity": fidelity,
             "config": kpass1_config(m, k, n)}
    return Point("matmul_tt_metal", shape, f"{_QWEN}, {what}", published_us * 1e-6)


# Rows (in0 block divisor, output blocks along M, along N) of the benchmark's tables for the DRAM shapes.
_ROW_3072_3072_4096 = (2, 1, 1)
_ROW_3072_4096_4096 = (2, 1, 1)
_ROW_3328_2560_2560 = (1, 1, 1)
_ROW_4096 = (1, 2, 2)
_ROW_8192 = (2, 4, 4)
_ROW_8192_BFP4 = (2, 2, 2)

POINTS += [
    _gemm_point(3072, 3072, 4096, "bf16", "HiFi2", _ROW_3072_3072_4096, 74.19),
    _gemm_point(3072, 4096, 4096, "bf16", "HiFi2", _ROW_3072_4096_4096, 75.09),
    _gemm_point(3328, 2560, 2560, "bf16", "HiFi2", _ROW_3328_2560_2560, 63.14),
    _gemm_point(4096, 4096, 4096, "bf16", "HiFi2", _ROW_4096, 59.50),
    _gemm_point(8192, 8192, 8192, "bf16", "HiFi2", _ROW_8192, 66.47),
    _gemm_point(3072, 3072, 4096, "bf16", "HiFi4", _ROW_3072_3072_4096, 91.69),
    _gemm_point(3072, 4096, 4096, "bf16", "HiFi4", _ROW_3072_4096_4096, 92.18),
    _gemm_point(3328, 2560, 2560, "bf16", "HiFi4", _ROW_3328_2560_2560, 89.41),
    _gemm_point(4096, 4096, 4096, "bf16", "HiFi4", _ROW_4096, 83.21),
    _gemm_point(8192, 8192, 8192, "bf16", "HiFi4", _ROW_8192, 88.69),
    _gemm_point(3328, 2560, 2560, "bfp8", "HiFi2", _ROW_3328_2560_2560, 85.08),
    _gemm_point(4096, 4096, 4096, "bfp8", "HiFi2", _ROW_4096, 79.43),
    _gemm_point(8192, 8192, 8192, "bfp8", "HiFi2", _ROW_8192, 83.94),
    _gemm_point(3328, 2560, 2560, "bfp8", "LoFi", _ROW_3328_2560_2560, 58.62),
    _gemm_point(4096, 4096, 4096, "bfp8", "LoFi", _ROW_4096, 58.88),
    _gemm_point(8192, 8192, 8192, "bfp8", "LoFi", _ROW_8192, 64.77),
    _gemm_point(3328, 2560, 2560, "bfp4", "LoFi", _ROW_3328_2560_2560, 81.62),
    _gemm_point(8192, 8192, 8192, "bfp4", "LoFi", _ROW_8192_BFP4, 82.57),
    # The Qwen3.5-9B demo's attention projections with its one-K-pass config, fp32 DST accumulation off,
    # packer L1 accumulation, activation and bfp8 weight in DRAM, output to DRAM, one chip of an N300
    # (docs/calibration_sources.md 1b says which conditions are established and from where).
    _qwen_point(2048, 4096, 5120, "fused QKV in-projection, one K pass, HiFi2 (model_config.py)", 1011.5),
    _qwen_point(2048, 4096, 5120, "fused QKV in-projection, one K pass, LoFi (COMPUTE_LOFI_NO_FP32_ACC)", 887.3,
                fidelity="LoFi"),
    _qwen_point(2048, 2048, 4096, "attention out-projection, one K pass, HiFi2 (model_config.py)", 517.2),
    _qwen_point(2048, 2048, 4096, "attention out-projection after bfp8 SDPA, HiFi2 (COMPUTE_LOFI_NO_FP32_ACC)",
                402.6, in0="bfp8"),
    _qwen_point(2048, 2048, 4096, "attention out-projection after bfp8 SDPA, LoFi (COMPUTE_LOFI_NO_FP32_ACC)",
                328.9, in0="bfp8", fidelity="LoFi"),
]


def run_matmul_tt_metal(device, shape: dict):
    """tt-metal's own 2D-multicast matmul (its kernels from the pinned wheel, in the program its factory
    builds: ttprefill/ops/upstream/matmul_mcast.py) on the 8x8 grid with the point's program config,
    bf16 DST, packer L1 accumulation, approximate math, as both sources' compute configs set them."""
    from ttprefill.ops.upstream.matmul_mcast import matmul_mcast_2d_program

    m, k, n = int(shape["m"]), int(shape["k"]), int(shape["n"])
    a = device.allocate((m, k), _FORMATS[shape["in0"]])
    b = device.allocate((k, n), _FORMATS[shape["in1"]])
    c = device.allocate((m, n), _FORMATS[shape["out"]])
    try:
        return device.run(matmul_mcast_2d_program(device, a, b, c, **shape["config"],
                                                  fidelity=MathFidelity[shape["fidelity"]], fp32_dest_acc_en=False,
                                                  packer_l1_acc=True, math_approx_mode=True))
    finally:
        for t in (a, b, c):
            device.free(t)


# ---------------------------------------------------------------- SDPA (tt-metal's sdpa program, 8x8)

_SDPA_9B = ("tt-metal models/demos/blackhole/qwen36/tt/tp_common.py sdpa_bf8_enabled docstring: device kernel "
            "duration, N300 (per chip), one full-attention layer of Qwen3.5-9B at S=2048")


def _sdpa_9b_point(fmt: str, published_us: float) -> Point:
    """The 9B's SDPA on one chip of an N300 (TP=2: 8 q / 2 kv heads of 256), as its demo runs it
    (attention/tp.py forward_prefill_paged): q = k chunk 128 (S >= 2048), exp_approx_mode False,
    COMPUTE_HIFI2 (HiFi2, fp32 DST, math_approx_mode); in bf8 mode Q, K, V and the output are bfp8.
    The measured op is chunked_scaled_dot_product_attention over the paged cache at chunk_start 0: the
    same factory and compute kernel as the plain causal program run here, whose reader reads K/V
    contiguously instead of through the page table (an approximation of the reader only)."""
    shape = {"q_heads": 8, "kv_heads": 2, "head_dim": 256, "seq": 2048, "chunk": 128, "qkv": fmt, "out": fmt,
             "fidelity": "HiFi2", "fp32_dest_acc": True, "exp_approx": False}
    return Point("sdpa_tt_metal", shape, f"{_SDPA_9B}, {fmt.upper()} Q/K/V", published_us * 1e-6)


POINTS += [_sdpa_9b_point("bf16", 770.0), _sdpa_9b_point("bfp8", 494.0)]


def run_sdpa_tt_metal(device, shape: dict):
    """tt-metal's SDPA prefill program (its wheel kernels in its factory's program:
    ttprefill/ops/upstream/sdpa.py), causal, on the 8x8 grid."""
    from ttprefill.ops.upstream.sdpa import SdpaShape, sdpa_program

    qkv, out = _FORMATS[shape["qkv"]], _FORMATS[shape["out"]]
    s = SdpaShape(1, int(shape["q_heads"]), int(shape["kv_heads"]), int(shape["head_dim"]), int(shape["seq"]),
                  int(shape["chunk"]), int(shape["chunk"]), fidelity=MathFidelity[shape["fidelity"]],
                  fp32_dest_acc=bool(shape["fp32_dest_acc"]), exp_approx=bool(shape["exp_approx"]),
                  q_format=qkv, kv_format=qkv, out_format=out)
    program, t = sdpa_program(device, s)
    try:
        return device.run(program)
    finally:
        for tensor in (t.q, t.k, t.v, t.out):
            device.free(tensor)


def measured_s(point: Point, report) -> float:
    """The modeled counterpart of what the point's figure times (Point.metric), in seconds at 1 GHz."""
    if point.metric == "kernel":
        return report.cycles / 1e9
    if point.metric == "math":
        ends = [r["end_cycle"] for core in report.cores for r in core["roles"] if r["role"] == "compute"]
        return sum(ends) / len(ends) / 1e9
    raise ValueError(f"unknown metric {point.metric!r} of a calibration point; use 'kernel' or 'math'")


PROGRAMS: dict[str, tuple[str, Callable]] = {
    "noc": ("ttprefill kernels/calibration/noc_transactions.cpp (one core)", run_noc),
    "dram_stream": ("ttprefill kernels/calibration/noc_transactions.cpp (many cores, one DRAM bank each)",
                    run_dram_stream),
    "matmul_tt_metal": ("tt-metal's 2D multicast matmul kernels, its factory's program (8x8)", run_matmul_tt_metal),
    "sdpa_tt_metal": ("tt-metal's sdpa prefill kernels, its factory's program (8x8, causal)", run_sdpa_tt_metal),
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
        results.append(Result(point, measured_s(point, report)))
    held = [r.ratio for r in results if r.point.held_out]
    low, high = HELD_OUT_BAND
    return {
        "model_version": model_version(),
        "cost_setting": costs,
        "points": [
            {"program": PROGRAMS[r.point.program][0], "shape": r.point.shape, "source": r.point.source,
             "published_s": r.point.published_s, "modeled_s": r.modeled_s, "ratio": r.ratio,
             "held_out": r.point.held_out, "metric": r.point.metric}
            for r in results
        ],
        "held_out_points": len(held),
        "held_out_ratio_min": min(held),
        "held_out_ratio_max": max(held),
        "held_out_within_band": all(low <= x <= high for x in held),
        "band": list(HELD_OUT_BAND),
    }


def bench_calibration(args) -> dict:
    """The chip's points, and apart from them (a model of its own, with its own version) the device-timed
    collectives against the mesh executor's Ethernet model, all held out at the central setting."""
    from loguru import logger

    from ttprefill.bench.device import cost_setting
    from ttprefill.device import mesh_timing

    costs = cost_setting(args.device)
    result = calibrate(costs, progress=lambda what: logger.info("calibration: {}", what))
    result["collectives"] = mesh_timing.calibration(costs)
    return result
