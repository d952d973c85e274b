"""The work of the GDN layer and scan as GDN.md counts it (nominal FLOPs, the least DRAM traffic) and
the bound they set at the chip's FPU and DRAM peaks (ttprefill.hw)."""

from __future__ import annotations

from ttprefill.device.program import MathFidelity
from ttprefill.hw import CLOCK_HZ, DRAM_PEAK_BYTES_PER_CYCLE, MAX_CORES, fpu_peak_flops_per_cycle

from .shapes import GdnDims, ScanShape


def nominal_flops(shape: ScanShape) -> float:
    """GDN.md's FLOP count of the chunked scan: (6KV + 6CK + 4CV + C^2/3) per token per value head."""
    K, V, C = shape.key_dim, shape.value_dim, shape.chunk
    return float(shape.tokens * shape.v_heads * (6 * K * V + 6 * C * K + 4 * C * V + C * C / 3))


def min_dram_bytes(dims: GdnDims, tokens: int) -> float:
    """The least DRAM traffic a GDN layer core can have: read qkv, z, a, b (bf16) and the state and
    conv state, write y (bf16) and the state. Anything a kernel writes and reads back (chunk records,
    intermediates between programs) is on top of this."""
    activations = tokens * (dims.conv_channels + 2 * dims.v_heads * dims.value_dim + 2 * dims.v_heads) * 2
    states = 2 * dims.v_heads * dims.key_dim * dims.value_dim * 4 + 2 * 3 * dims.conv_channels * 2
    return float(activations + states)


def scan_min_dram_bytes(shape: ScanShape) -> float:
    """The least DRAM traffic of the chunked scan alone: read q, k, v (bf16), g and beta (fp32) and the
    state, write o (bf16) and the state."""
    s = shape
    reads = s.tokens * (2 * s.qk_heads * s.key_dim * 2 + s.v_heads * s.value_dim * 2 + 2 * s.v_heads * 4)
    writes = s.tokens * s.v_heads * s.value_dim * 2
    return float(reads + writes + 2 * s.v_heads * s.key_dim * s.value_dim * 4)


def bound_fraction(modeled_s: float, flops: float, dram_bytes: float, fidelity: MathFidelity) -> tuple[float, float]:
    """The time the FPU and DRAM together allow (the larger of flops at peak and bytes at peak
    bandwidth) and the fraction of it a run achieves (bound / modeled time; 1 is perfect)."""
    bound_cycles = max(flops / fpu_peak_flops_per_cycle(MAX_CORES, fidelity), dram_bytes / DRAM_PEAK_BYTES_PER_CYCLE)
    bound_s = bound_cycles / CLOCK_HZ
    return bound_s, bound_s / modeled_s
