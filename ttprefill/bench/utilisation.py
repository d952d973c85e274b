"""Utilisation figures from a run's modeled cycles, against the chip's peaks (ttprefill.hw)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ttprefill.device.program import MathFidelity
from ttprefill.hw import CLOCK_HZ, DRAM_PEAK_BYTES_PER_CYCLE, NOC_PORT_BYTES_PER_CYCLE, fpu_peak_flops_per_cycle


@dataclass
class CombinedRuns:
    """Programs run back to back: their cycles add up, and so do their counters."""

    reports: list
    cycles: int = 0
    counters: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cycles = sum(r.cycles for r in self.reports)
        for r in self.reports:
            for key, value in r.counters.items():
                if isinstance(value, (int, float)):
                    self.counters[key] = self.counters.get(key, 0) + value


def utilisation(report, *, flops: float, cores: int, fidelity: MathFidelity) -> dict:
    """Modeled figures of a run (anything with `cycles` and `counters`): cycles, seconds, TFLOP/s, and
    the FPU, DRAM, SFPU, NoC and per-pipeline utilisation."""
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
