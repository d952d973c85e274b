"""`ttprefill bench attention`: prefill on the simulator with modeled figures and accuracy."""

from __future__ import annotations

import time

import numpy as np

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.hw import CLOCK_HZ, MAX_CORES
from ttprefill.ops.attention.cache import KVCache
from ttprefill.ops.attention.host import flash_attention, write_kv_cache
from ttprefill.ops.attention.planner import _ceil_div
from ttprefill.ops.attention.shapes import FlashAttentionConfig
from ttprefill.ops.attention.work import attention_flops

from .device import cost_setting, finish_trace
from .options import AttentionBenchArgs
from .utilisation import CombinedRuns, utilisation


def attention_bench(args: AttentionBenchArgs) -> dict:
    """`ttprefill bench attention`: prefill `seq` tokens (the first `prefix` already in the cache) in
    chunks of `chunk` (default: the rest at once) on the simulator and report wall time, accuracy
    against the fp64 reference (small shapes) and the modeled figures summed over every program run
    (the cache writes and the attention programs).

    The simulator runs it (args.device's timing-only, trace and cost setting apply): check ("auto" |
    "yes" | "no") runs the numerics and compares, auto for up to ~2^31 score elements x head_dim.
    """
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.reference.attention import causal_attention
    from ttprefill.reference.metrics import pcc, rel_rms

    seq, hq, hkv, d = int(args.seq), int(args.q_heads), int(args.kv_heads), int(args.head_dim)
    prefix = int(args.prefix or 0)
    chunk = int(args.chunk or 0) or (seq - prefix)
    page_tokens = int(args.page_tokens)
    page_format = DataFormat.Bfp8_b if str(args.format or "bf16").lower().startswith("bfp8") else DataFormat.Float16_b
    fidelity = MathFidelity[args.fidelity or "HiFi2"]
    if not 0 <= prefix < seq:
        raise ValueError(f"--prefix {prefix} must be in [0, --seq {seq})")
    check = args.check or "auto"
    pairs = hq * (seq * (seq + 1) // 2 - prefix * (prefix + 1) // 2)
    numerics = check == "yes" or (check == "auto" and pairs * d <= 2 ** 31)
    if args.device.timing_only and check != "yes":
        numerics = False
    trace_path = args.device.trace

    rng = np.random.default_rng(0)
    if numerics:
        q_all, k_all, v_all = (rng.standard_normal((seq, h, d)).astype(np.float32) for h in (hq, hkv, hkv))
    else:  # timing only: values do not matter, and zeros cost no host memory (np.zeros maps lazily)
        q_all, k_all, v_all = (np.zeros((seq, h, d), np.float32) for h in (hq, hkv, hkv))
    device = SimDevice(timing_only=not numerics, trace=bool(trace_path), costs=cost_setting(args.device))
    pages = _ceil_div(seq, page_tokens)
    cache = KVCache.create(device, pages, page_tokens, hkv, d, page_format)
    table = list(range(pages))
    config = FlashAttentionConfig(math_fidelity=fidelity)
    if prefix:  # the prefix is in the cache before the measured chunks (written, not measured)
        write_kv_cache(device, cache, k_all[:prefix], v_all[:prefix], table, 0)
    t0 = time.perf_counter()
    reports, outs, cores, last = [], [], 1, None
    attention_cycles = write_cycles = 0
    for start in range(prefix, seq, chunk):
        stop = min(seq, start + chunk)
        run = flash_attention(device, q_all[start:stop], k_all[start:stop], v_all[start:stop], cache, table, start,
                              config=config, return_run=True)
        attention_cycles += run.attention_report.cycles
        write_cycles += run.write_report.cycles
        reports += [run.write_report, run.attention_report]
        cores = max(cores, len(run.plan.core_units))
        outs.append(run.out)
        last = run.attention_report
    wall = time.perf_counter() - t0
    cache.free()
    if last is not None:
        finish_trace(args.device, last)

    flops = attention_flops(hq, d, seq - prefix, prefix)
    total = CombinedRuns(reports)
    figures = utilisation(total, flops=flops, cores=MAX_CORES, fidelity=fidelity)
    result = {
        "shape": {"seq": seq, "q_heads": hq, "kv_heads": hkv, "head_dim": d, "chunk": chunk, "prefix": prefix,
                  "page_tokens": page_tokens, "format": page_format.name, "fidelity": fidelity.name},
        "wall_s": wall,
        "modeled_cycles": int(total.cycles),
        "modeled_s": figures["modeled_s"],
        # The two programs apart: the attention itself, and writing the chunk's K/V into the cache pages.
        "attention_modeled_s": attention_cycles / CLOCK_HZ,
        "cache_write_modeled_s": write_cycles / CLOCK_HZ,
        "tflops": figures["tflops"],
        "fpu_util": figures["fpu_util"],
        "dram_util": figures["dram_util"],
        "sfpu_util": figures["sfpu_util"],
        "noc_util": figures["noc_util"],
        "pipeline_busy": figures["pipeline_busy"],
        "cores": cores,
        "numerics": numerics,
    }
    if numerics:
        ref = causal_attention(q_all[prefix:], k_all, v_all, prefix)
        out = np.concatenate(outs, axis=0)
        result["pcc"] = pcc(ref, out)
        result["rel_rms"] = rel_rms(ref, out)
    return result
