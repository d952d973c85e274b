"""Our kernels beside tt-metal's own, in one run, on one timing model (`bench attention --peer`,
`bench gdn --peer`).

Both sides run timing-only on the simulator at each cost setting of the model (low, central, high), so
each figure is a band; the speedup is peer time / our time at the same setting. Like for like:
- attention: our flash-attention program alone (the chunk's K/V written into the cache pages is a
  separate program, reported apart) against tt-metal's SDPA prefill program (causal, GQA, contiguous
  K/V) in the program config tt-metal's own models run it with (SDPA_DEMO_CONFIG below), or, where that
  config's chunk does not fit a core's L1, the fastest smaller chunk that does (the report says which);
- GDN: our chunked scan (the gate-vector and scan programs) against tt-metal's chunk_gated_delta_rule
  program, same heads, dimensions, tokens and chunk.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from loguru import logger

from ttprefill.device.program import L1OverflowError

SETTINGS = ("low", "central", "high")
SDPA_CHUNKS = (64, 128, 256)  # tt-metal's SDPAProgramConfig q/k chunk sizes the peer may take

# The SDPA program config tt-metal's Qwen3.5 demo prefills with: tenstorrent/tt-metal
# models/demos/blackhole/qwen36/tt/attention/tp.py, TPAttention.forward_prefill (the contiguous causal
# prefill, read at 01c6e8ed): an 8x8 grid, exp_approx_mode=False, q_chunk_size = k_chunk_size = 128 for
# S >= 2048, else 64 (its comment: 256 wins in isolation at 3-4k but clashes with resident L1 buffers in
# the full model), and no compute_kernel_config, so the op's default (HiFi2, no fp32 DST), as in
# ttprefill.ops.upstream.sdpa. (Its paged chunked-prefill path takes k_chunk 256 for the 27B at S <= 2048;
# that is the chunked op, which the mirror does not cover.)
SDPA_DEMO_EXP_APPROX = False


def sdpa_demo_chunk(seq: int) -> int:
    return 128 if seq >= 2048 else 64


# Qwen3.5's attention layers (per chip, no tensor parallelism): 27B's 24 q / 4 kv heads of 256, and the
# 16 q / 4 kv heads of 128 issue 13 names; the sweep `bench attention --peer` runs without shape flags.
PEER_SHAPES = ((24, 4, 256), (16, 4, 128))
PEER_SEQS = (2048, 4096, 8192, 16384, 32768)


def _band(values: dict[str, float]) -> dict[str, float]:
    return {k: values[k] for k in SETTINGS}


def _with(args, **device_overrides):
    """The same benchmark arguments on a device choice with these fields changed (timing_only, costs)."""
    return replace(args, device=replace(args.device, **device_overrides))


def _sdpa_run_s(q_heads: int, kv_heads: int, head_dim: int, seq: int, chunk: int, costs: str) -> float:
    """tt-metal's SDPA on the simulator, timing only, in modeled seconds (raises L1OverflowError)."""
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.hw import CLOCK_HZ
    from ttprefill.ops.upstream.sdpa import SdpaShape, sdpa_program

    device = SimDevice(timing_only=True, costs=costs)
    shape = SdpaShape(1, q_heads, kv_heads, head_dim, seq, q_chunk=chunk, k_chunk=chunk,
                      exp_approx=SDPA_DEMO_EXP_APPROX)
    program, _ = sdpa_program(device, shape)
    seconds = device.run(program).cycles / CLOCK_HZ
    logger.info("peer sdpa {}x{} d{} seq {} chunk {}: {:.3f} ms modeled ({})", q_heads, kv_heads, head_dim, seq,
                chunk, seconds * 1e3, costs)
    return seconds


def sdpa_peer_chunk(q_heads: int, kv_heads: int, head_dim: int, seq: int) -> tuple[int, str]:
    """The chunk the peer runs with: the models' config where it fits L1, else the fastest smaller one that
    does (timed at the central setting). Returns (chunk, how it was chosen)."""
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.ops.upstream.sdpa import SdpaShape, sdpa_program

    demo = sdpa_demo_chunk(seq)

    def fits(chunk: int) -> bool:
        try:
            program, _ = sdpa_program(SimDevice(timing_only=True),
                                      SdpaShape(1, q_heads, kv_heads, head_dim, seq, chunk, chunk,
                                                exp_approx=SDPA_DEMO_EXP_APPROX))
            program.validate()
            return True
        except L1OverflowError:
            return False

    if seq % demo == 0 and fits(demo):
        return demo, "qwen36 demo forward_prefill config"
    smaller = [c for c in SDPA_CHUNKS if c < demo and seq % c == 0 and fits(c)]
    if not smaller:
        raise ValueError(f"no SDPA chunk size of {SDPA_CHUNKS} fits L1 for head_dim {head_dim}, seq {seq}")
    times = {c: _sdpa_run_s(q_heads, kv_heads, head_dim, seq, c, "central") for c in smaller}
    best = min(times, key=times.get)
    return best, f"fastest fitting chunk of {smaller} (the demo's {demo} overflows L1)"


def sdpa_modeled_s(q_heads: int, kv_heads: int, head_dim: int, seq: int, costs: str,
                   chunk: int | None = None) -> tuple[float, int]:
    """tt-metal's SDPA on the simulator, timing only: (seconds, the chunk size it ran with)."""
    chunk = chunk or sdpa_peer_chunk(q_heads, kv_heads, head_dim, seq)[0]
    return _sdpa_run_s(q_heads, kv_heads, head_dim, seq, chunk, costs), chunk


def attention_with_peer(args) -> dict:
    from ttprefill.bench.attention import attention_bench

    chunk, chosen = sdpa_peer_chunk(args.q_heads, args.kv_heads, args.head_dim, args.seq)
    ours, peer, full = {}, {}, {}
    for costs in SETTINGS:
        result = attention_bench(_with(args, timing_only=True, costs=costs))
        ours[costs] = result["attention_modeled_s"]
        full[costs] = result
        peer[costs], _ = sdpa_modeled_s(args.q_heads, args.kv_heads, args.head_dim, args.seq, costs, chunk)
    return _report(full["central"], ours, peer, {"peer": "tt-metal sdpa (transformer/sdpa, causal)",
                                                 "peer_config": {"q_chunk": chunk, "k_chunk": chunk,
                                                                 "exp_approx_mode": SDPA_DEMO_EXP_APPROX,
                                                                 "chosen": chosen},
                                                 "cache_write_modeled_s": _band({k: v["cache_write_modeled_s"]
                                                                                 for k, v in full.items()})})


def attention_sweep(args, shapes=PEER_SHAPES, seqs=PEER_SEQS) -> dict:
    """`bench attention --peer` without shape flags: every Qwen3.5 shape at every sequence length."""
    runs = []
    for q_heads, kv_heads, head_dim in shapes:
        for seq in seqs:
            runs.append(attention_with_peer(replace(args, q_heads=q_heads, kv_heads=kv_heads, head_dim=head_dim,
                                                    seq=seq)))
    return {"peer": "tt-metal sdpa (transformer/sdpa, causal)", "sweep": runs}


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
    from ttprefill.bench.gdn import gdn_bench

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


def run(what: str, args, sweep: bool = False) -> dict:
    """One shape (the arguments'), or with `sweep` (attention only) the Qwen3.5 shapes over PEER_SEQS."""
    benches: dict[str, Callable] = {"attention": attention_sweep if sweep else attention_with_peer,
                                    "gdn": gdn_with_peer}
    if what not in benches:
        raise ValueError(f"--peer applies to attention and gdn, not {what}")
    if sweep and what != "attention":
        raise ValueError("the --peer sweep over sequence lengths is for attention only")
    return benches[what](args)
