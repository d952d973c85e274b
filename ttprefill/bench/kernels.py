"""`ttprefill bench sim` (the simulator's own speed) and `bench matmul` (a multicast matmul, the timing
model's calibration program). Figures from the timing model are modeled; wall-clock figures are the
host's; the JSON keys say which is which."""

from __future__ import annotations

import time

import numpy as np

from ttprefill.device.program import DataFormat, MathFidelity

from .device import device_for, finish_trace
from .options import MatmulBenchArgs, SimBenchArgs
from .utilisation import utilisation


def _fidelity(name: str | None, default: MathFidelity) -> MathFidelity:
    return MathFidelity[name] if name else default


def bench_sim(args: SimBenchArgs) -> dict:
    """Simulator speed: tile matmuls per wall second and the JIT's cold / cached compile time."""
    import shutil
    import tempfile
    import os

    from ttprefill import _sim
    from ttprefill.device import jit
    from ttprefill.device.program import ComputeConfig, CoreRangeSet, Kernel, Role

    fid = _fidelity(args.fidelity, MathFidelity.HiFi4)
    rate = _sim.matmul_tile_rate(int(fid), 20000)
    kernel = Kernel(jit.KERNELS_DIR / "examples" / "matmul_compute.cpp", Role.COMPUTE, CoreRangeSet.of([(0, 0)]),
                    [1, 1, 1, 1, 1, 1], compute_config=ComputeConfig())
    old = os.environ.get("TTPREFILL_JIT_CACHE")
    tmp = tempfile.mkdtemp(prefix="ttprefill-jit-bench-")
    os.environ["TTPREFILL_JIT_CACHE"] = tmp
    try:
        t0 = time.perf_counter()
        jit.build(kernel)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        jit.build(kernel)
        cached = time.perf_counter() - t0
    finally:
        if old is None:
            os.environ.pop("TTPREFILL_JIT_CACHE")
        else:
            os.environ["TTPREFILL_JIT_CACHE"] = old
        shutil.rmtree(tmp, ignore_errors=True)
    return {"tile_matmuls_per_s": rate, "fidelity": fid.name, "jit_compile_s": cold, "jit_cached_s": cached,
            "shape": {"tile": [32, 32, 32]}}


def bench_matmul(args: MatmulBenchArgs) -> dict:
    """A multi-core multicast matmul (the calibration program of the timing model)."""
    from ttprefill.ops import examples
    from ttprefill.reference.metrics import pcc, rel_rms

    size = args.size or 512
    fmt = DataFormat.Bfp8_b if (args.format or "bf16") == "bfp8" else DataFormat.Float16_b
    fid = _fidelity(args.fidelity, MathFidelity.HiFi2)
    dev = device_for(args.device)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    ta, tb = dev.upload(a, fmt), dev.upload(b, fmt)
    tc = dev.allocate((size, size), DataFormat.Float16_b)
    tiles = size // 32
    grid = (min(8, tiles), min(8, tiles))
    k_block = max(d for d in (1, 2, 4) if (tiles // 1) % d == 0)
    t0 = time.perf_counter()
    # bf16 DST (no fp32 accumulation) as tt-metal's measured BF16/BFP8 matmuls run.
    report = dev.run(examples.matmul_program(dev, ta, tb, tc, grid, k_block=k_block, fidelity=fid, fp32_dest=False))
    wall = time.perf_counter() - t0
    finish_trace(args.device, report)
    out = {"wall_s": wall, "shape": {"m": size, "k": size, "n": size, "grid": list(grid), "format": fmt.name,
                                     "fidelity": fid.name, "timing_only": args.device.timing_only}}
    out.update(utilisation(report, flops=2.0 * size ** 3, cores=grid[0] * grid[1], fidelity=fid))
    if not args.device.timing_only:
        c = dev.download(tc)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        out["pcc"], out["rel_rms"] = pcc(ref, c), rel_rms(ref, c)
    return out
