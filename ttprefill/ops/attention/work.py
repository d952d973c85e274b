"""The useful work of causal attention as the benchmarks count it."""

from __future__ import annotations

def attention_flops(q_heads: int, head_dim: int, sq: int, p0: int) -> float:
    """Useful FLOPs of causal attention for queries at [p0, p0 + sq): 4 * D per visible (query, key) pair."""
    pairs = sq * p0 + sq * (sq + 1) // 2
    return 4.0 * head_dim * q_heads * pairs
