"""Our kernels beside tt-metal's own, in one run, on one timing model (`bench attention --peer`,
`bench gdn --peer`).

Both sides run timing-only on the simulator at each cost setting of the model (low, central, high), so
each figure is a band; the speedup is peer time / our time at the same setting. Like for like:
- attention: our flash-attention program alone (the chunk's K/V written into the cache pages is a
  separate program, reported apart) against tt-metal's SDPA prefill program (causal, GQA, contiguous
  K/V) at its fastest Q/K chunk size that fits L1;
- GDN: our chunked scan (the gate-vector and scan programs) against tt-metal's chunk_gated_delta_rule
  program, same heads, dimensions, tokens and chunk.
"""

from __future__ import annotations

import argparse
from typing import Callable

from loguru import logger

from ttprefill.device.program import L1OverflowError

SETTINGS = ("low", "central", "high")
SDPA_CHUNKS = (64, 128, 256)  # tt-metal's SDPAProgramConfig q/k chunk sizes the peer may take


def _band(values: dict[str, float]) -> dict[str, float]:
    return {k: values[k] for k in SETTINGS}


def _with(args, **overrides):
    merged = dict(vars(args))
    merged.update(overrides)
    return argparse.Namespace(**merged)


def sdpa_modeled_s(q_heads: int, kv_heads: int, head_dim: int, seq: int, costs: str) -> tuple[float, int]:
    """tt-metal's SDPA on the simulator, timing only: (seconds, the chunk size) at its fastest chunk."""
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.ops.upstream.sdpa import SdpaShape, sdpa_program

    best: tuple[float, int] | None = None
    for chunk in SDPA_CHUNKS:
        if seq % chunk:
            continue
        device = SimDevice(timing_only=True, costs=costs)
        shape = SdpaShape(1, q_heads, kv_heads, head_dim, seq, q_chunk=chunk, k_chunk=chunk)
        try:
            program, _ = sdpa_program(device, shape)
            report = device.run(program)
        except L1OverflowError:
            continue  # this chunk size does not fit a core's L1 at this head dim
        seconds = report.cycles / 1e9
        logger.info("peer sdpa chunk {}: {:.3f} ms modeled ({})", chunk, seconds * 1e3, costs)
        if best is None or seconds < best[0]:
            best = (seconds, chunk)
    if best is None:
        raise ValueError(f"no SDPA chunk size of {SDPA_CHUNKS} fits L1 for head_dim {head_dim}, seq {seq}")
    return best


def attention_with_peer(args) -> dict:
    from ttprefill.ops.attention.benchmark import attention_bench

    ours, peer, chunks, full = {}, {}, {}, {}
    for costs in SETTINGS:
        result = attention_bench(_with(args, timing_only=True, costs=costs))
        ours[costs] = result["attention_modeled_s"]
        full[costs] = result
        peer[costs], chunks[costs] = sdpa_modeled_s(args.q_heads, args.kv_heads, args.head_dim, args.seq, costs)
    return _report(full["central"], ours, peer, {"peer": "tt-metal sdpa (transformer/sdpa, causal)",
                                                 "peer_chunk": chunks,
                                                 "cache_write_modeled_s": _band({k: v["cache_write_modeled_s"]
                                                                                 for k, v in full.items()})})


def cgdr_modeled_s(qk_heads: int, v_heads: int, key_dim: int, value_dim: int, tokens: int, chunk: int,
                   costs: str) -> float:
    """tt-metal's chunk_gated_delta_rule program on the simulator, timing only."""
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.ops.upstream.gated_delta_rule import CgdrShape, chunk_gated_delta_rule_program

    device = SimDevice(timing_only=True, costs=costs)
    # tt-metal repeats q/k heads to the value heads on the host; its program sees HV heads.
    program, _ = chunk_gated_delta_rule_program(device, CgdrShape(1, v_heads, key_dim, value_dim, tokens, chunk))
    seconds = device.run(program).cycles / 1e9
    logger.info("peer chunk_gated_delta_rule: {:.3f} ms modeled ({})", seconds * 1e3, costs)
    return seconds


def gdn_with_peer(args) -> dict:
    from ttprefill.ops.gdn.benchmark import gdn_bench

    ours, peer, full = {}, {}, {}
    for costs in SETTINGS:
        result = gdn_bench(_with(args, timing_only=True, costs=costs))
        shape = result["shape"]
        ours[costs] = result["scan_modeled_s"]
        full[costs] = result
        peer[costs] = cgdr_modeled_s(shape["qk_heads"], shape["v_heads"], shape["key_dim"], shape["value_dim"],
                                     shape["seq"], shape["chunk"], costs)
    return _report(full["central"], ours, peer, {"peer": "tt-metal chunk_gated_delta_rule (transformer/)",
                                                 "layer_core_modeled_s": _band({k: v["modeled_s"]
                                                                                for k, v in full.items()})})


def _report(central: dict, ours: dict, peer: dict, extra: dict) -> dict:
    from ttprefill.device.sim_device import model_version

    speedup = {k: peer[k] / ours[k] for k in SETTINGS}
    out = {
        "model_version": model_version(),
        "shape": central["shape"],
        "modeled_s": ours["central"],
        "peer_modeled_s": peer["central"],
        "speedup": speedup["central"],
        "band": {"modeled_s": _band(ours), "peer_modeled_s": _band(peer), "speedup": _band(speedup)},
    }
    out.update(extra)
    return out


def run(what: str, args) -> dict:
    benches: dict[str, Callable] = {"attention": attention_with_peer, "gdn": gdn_with_peer}
    if what not in benches:
        raise ValueError(f"--peer applies to attention and gdn, not {what}")
    return benches[what](args)
