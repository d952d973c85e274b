"""Utilisation figures from a simulated run's modeled cycles (WORMHOLE.md peaks; 1 GHz clock)."""

from __future__ import annotations

from ttprefill.device.program import MathFidelity

CLOCK_HZ = 1.0e9
# One 8x16 by 16x16 multiply per cycle per core at LoFi = 4096 FLOP/cycle; each fidelity phase
# divides that (WORMHOLE.md, tech_reports/matrix_engine).
FPU_FLOPS_PER_CYCLE_LOFI = 2 * 8 * 16 * 16
# 12 channels x 24 GB/s (WORMHOLE.md, DRAMTile/README.md), in bytes per cycle at 1 GHz.
DRAM_PEAK_BYTES_PER_CYCLE = 288.0
# Each core injects into 2 NoCs at up to 30 B/cycle each (tt-npe's link model, WORMHOLE.md).
NOC_PORT_BYTES_PER_CYCLE = 2 * 30.0


def fpu_peak_flops_per_cycle(cores: int, fidelity: MathFidelity) -> float:
    return cores * FPU_FLOPS_PER_CYCLE_LOFI / fidelity.phases


def utilisation(report, *, flops: float, cores: int, fidelity: MathFidelity) -> dict:
    cycles = max(1, report.cycles)
    seconds = cycles / CLOCK_HZ
    dram_bytes = report.counters.get("dram_read_bytes", 0) + report.counters.get("dram_write_bytes", 0)
    return {
        "modeled_cycles": report.cycles,
        "modeled_s": seconds,
        "tflops": flops / seconds / 1e12,
        "fpu_util": flops / (cycles * fpu_peak_flops_per_cycle(cores, fidelity)),
        "dram_util": dram_bytes / (cycles * DRAM_PEAK_BYTES_PER_CYCLE),
        # The SFPU does no FLOPs the way the FPU counts them: its utilisation is its busy share of the
        # cores' cycles. NoC: bytes moved over the cores' injection bandwidth.
        "sfpu_util": report.counters.get("sfpu_busy_cycles", 0) / (cycles * cores),
        "noc_util": report.counters.get("noc_bytes", 0) / (cycles * cores * NOC_PORT_BYTES_PER_CYCLE),
        # How busy each compute pipeline was, as a share of the cores' cycles: which one bounds a kernel.
        "pipeline_busy": {name: report.counters.get(f"{name}_busy_cycles", 0) / (cycles * cores)
                          for name in ("unpack", "fpu", "sfpu", "pack")},
    }
