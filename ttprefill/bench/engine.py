"""`ttprefill bench engine`: time to first token with and without the prefix cache on a workload
where 90% of each prompt is shared. Device time is modeled (simulator timing model); wall time is
this host's."""

from __future__ import annotations

import time
from dataclasses import replace

from ttprefill.engine import Engine, EngineOptions
from ttprefill.options import KV_PAGE_FORMAT_NAMES, kv_page_format_name
from ttprefill.workloads import shared_prefix

from .options import EngineBenchArgs


def _serve(backend: str, prompts, use_cache: bool, opts: EngineOptions) -> dict:
    # Without the cache: a new engine (empty cache) per request, so nothing is reused.
    engines = [Engine.from_preset("tiny", backend=backend, options=opts)]
    results, walls = [], []
    for i, p in enumerate(prompts):
        if not use_cache and i:
            engines.append(Engine.from_preset("tiny", backend=backend, options=opts, mixers=engines[0].mixers))
        eng = engines[-1]
        t0 = time.perf_counter()
        results.append(eng.prefill(p))
        walls.append(time.perf_counter() - t0)
    # TTFT of the requests after the first (the first one always computes everything).
    tail = results[1:] or results
    modeled = [r.modeled_device_s for r in tail]
    out = {
        "ttft_wall_s": sum(walls[1:] or walls) / len(tail),
        "ttft_modeled_s": (sum(modeled) / len(tail)) if all(m is not None for m in modeled) else None,
        "hit_rate": sum(r.cached_tokens for r in results) / sum(r.tokens for r in results),
        "chunks": sum(r.chunks for r in results),
        "host_s": sum(r.host_s for r in results),
        "device_s": sum(r.modeled_device_s or 0.0 for r in results),
        "bytes_held": engines[-1].cache.stats().device_bytes + engines[-1].cache.stats().host_bytes,
    }
    return out


def engine_bench(args: EngineBenchArgs) -> dict:
    seq = args.seq or 1024
    requests = 4
    prompts = shared_prefix(1024, requests=requests, prompt_tokens=seq, shared_fraction=0.9, seed=0)
    opts = EngineOptions() if args.chunk is None else EngineOptions(chunk_tokens=args.chunk)
    if args.kv_format is not None:
        opts = replace(opts, kv_page_format=KV_PAGE_FORMAT_NAMES[args.kv_format])
    backend = args.device.backend
    with_cache = _serve(backend, prompts, True, opts)
    without = _serve(backend, prompts, False, opts)
    result = {
        "shape": {"model": "tiny", "prompt_tokens": seq, "requests": requests, "shared_fraction": 0.9,
                  "chunk": opts.tokens_per_chunk, "checkpoint_every_blocks": opts.checkpoint_every_blocks,
                  "gdn_fidelity": opts.gdn_fidelity.name, "kv_format": kv_page_format_name(opts.kv_page_format),
                  "backend": backend},
        "wall_s": with_cache["ttft_wall_s"],
        "ttft_wall_s_cache": with_cache["ttft_wall_s"],
        "ttft_wall_s_no_cache": without["ttft_wall_s"],
        "hit_rate": with_cache["hit_rate"],
        "bytes_held": with_cache["bytes_held"],
        "host_us_per_chunk": 1e6 * with_cache["host_s"] / max(1, with_cache["chunks"]),
    }
    if with_cache["ttft_modeled_s"] is not None and without["ttft_modeled_s"]:
        result["modeled_s"] = with_cache["ttft_modeled_s"]
        result["ttft_modeled_s_cache"] = with_cache["ttft_modeled_s"]
        result["ttft_modeled_s_no_cache"] = without["ttft_modeled_s"]
        result["ttft_speedup"] = without["ttft_modeled_s"] / with_cache["ttft_modeled_s"]
        result["host_share_of_device"] = with_cache["host_s"] / max(1e-12, with_cache["device_s"])
    else:
        result["ttft_speedup"] = without["ttft_wall_s"] / with_cache["ttft_wall_s"]
        result["ttft_speedup_basis"] = "wall time (no modeled device time on this backend)"
    return result


def checkpoint_sweep(args: EngineBenchArgs) -> dict:
    """`ttprefill bench checkpoints`: how often to store GDN checkpoints. For each interval N (blocks),
    serve the chat workload and report the tokens served from the cache, the tokens recomputed because
    a hit had to fall back to an earlier checkpoint, and the checkpoint bytes held, with the bytes scaled
    to Qwen3.5-27B (48 GDN layers x 48 heads x 128 x 128 x 4 B = 151 MB per checkpoint)."""
    from ttprefill.model.config import get_preset
    from ttprefill.workloads import multi_turn_chat

    big = get_preset("qwen3.5-27b")
    bytes_27b = len(big.gdn_layers) * big.gdn_num_v_heads * big.gdn_key_head_dim * big.gdn_value_head_dim * 4
    import numpy as np

    rng = np.random.default_rng(2)
    document = rng.integers(0, 1024, 2048).tolist()
    workloads = {
        # Each turn resends the conversation: hits land on earlier prompts' ends (always checkpointed).
        "chat": multi_turn_chat(1024, users=4, turns=4, system_tokens=1024, user_tokens=160, reply_tokens=200,
                                seed=1),
        # One document cut at different lengths, then a question: prompts diverge at arbitrary points.
        "document_prefixes": [document[: int(n)] + rng.integers(0, 1024, 48).tolist()
                              for n in rng.integers(256, 2048, 16)],
    }
    backend = args.device.backend if args.device.backend != "sim" else "torch"  # hit patterns do not depend on the kernels
    rows = []
    defaults = EngineOptions()
    for (name, prompts), every in ((w, e) for w in workloads.items() for e in (1, 2, 4, 8, 16)):
        options = replace(defaults, checkpoint_every_blocks=every, cache_budget_bytes=1 << 30)
        eng = Engine.from_preset("tiny", backend=backend, options=options)
        # Requests arrive one after another (each finishes first), so no request can ask a running one
        # to checkpoint where they share a prefix: only the placement policy decides what is reusable.
        results = [eng.prefill(p) for p in prompts]
        stats = eng.cache.stats()
        served = sum(r.cached_tokens for r in results)
        matched = stats.lookup_tokens and sum(len(p) for p in prompts)
        checkpoints = stats.device_checkpoints + stats.host_checkpoints
        rows.append({"workload": name, "every_blocks": every, "hit_tokens": served, "prompt_tokens": matched,
                     "hit_rate": served / max(1, matched), "checkpoints_held": checkpoints,
                     "checkpoint_gb_at_27b": checkpoints * bytes_27b / 1e9})
    return {"shape": {"workloads": list(workloads), "block_tokens": defaults.block_tokens,
                      "default_every_blocks": defaults.checkpoint_every_blocks},
            "sweep": rows, "checkpoint_mb_at_27b": bytes_27b / 1e6}
