"""`ttprefill demo`: the main job on the simulator. A multi-turn chat workload with a shared system
prompt, on the tiny model, through the engine (prefix cache, chunk scheduler, device programs)."""

from __future__ import annotations

import json
import sys
import time

from loguru import logger
from tqdm import tqdm

from ttprefill.engine import Engine, EngineOptions
from ttprefill.workloads import multi_turn_chat


def main(args) -> int:
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    with Engine.from_preset("tiny", backend=args.backend, options=EngineOptions()) as engine:  # a card is closed after
        return _serve(args, engine)


def _serve(args, engine: Engine) -> int:
    users = max(1, min(3, args.requests))
    turns = max(1, -(-args.requests // users))
    prompts = multi_turn_chat(engine.config.vocab_size, users=users, turns=turns)[: args.requests]
    print(f"ttprefill demo: {len(prompts)} requests on the tiny model "
          f"({engine.config.num_layers} layers: {len(engine.config.gdn_layers)} GDN + "
          f"{len(engine.config.attention_layers)} attention), backend {args.backend}", file=sys.stderr)
    rows = []
    t0 = time.perf_counter()
    with tqdm(total=sum(len(p) for p in prompts), unit="tok", desc="prefill", file=sys.stderr) as bar:
        ids = [engine.submit(p) for p in prompts]

        def done(result):
            bar.update(result.tokens)
            rows.append(result)

        engine.run(on_result=done)
    total_wall = time.perf_counter() - t0
    failed = {rid: str(err) for rid, err in engine.failures.items()}
    order = {rid: i for i, rid in enumerate(ids)}
    rows.sort(key=lambda r: order[r.request_id])
    stats = engine.cache.stats()
    summary = {
        "requests": len(prompts),
        "tokens": sum(r.tokens for r in rows),
        "cached_tokens": sum(r.cached_tokens for r in rows),
        "wall_s": total_wall,
        "modeled_device_s": (sum(r.modeled_device_s for r in rows)
                             if rows and all(r.modeled_device_s is not None for r in rows) else None),
        "cache_hit_rate": stats.hit_tokens / max(1, stats.lookup_tokens),
        "cache_device_bytes": stats.device_bytes,
        "failed": failed,
    }
    if args.json:
        summary["per_request"] = [{"id": r.request_id, "tokens": r.tokens, "cached_tokens": r.cached_tokens,
                                   "wall_s": r.wall_s, "modeled_device_s": r.modeled_device_s} for r in rows]
        print(json.dumps(summary))
        return 0 if not failed else 1
    print(f"{'request':>8} {'tokens':>7} {'cached':>7} {'wall s':>8} {'device s (modeled)':>19}")
    for r in rows:
        dev = f"{r.modeled_device_s * 1e3:.3f} ms" if r.modeled_device_s is not None else "n/a"
        print(f"{r.request_id:>8} {r.tokens:>7} {r.cached_tokens:>7} {r.wall_s:>8.2f} {dev:>19}")
    dev_total = summary["modeled_device_s"]
    print(f"{'total':>8} {summary['tokens']:>7} {summary['cached_tokens']:>7} {total_wall:>8.2f} "
          f"{(f'{dev_total * 1e3:.3f} ms' if dev_total is not None else 'n/a'):>19}")
    print(f"prefix cache: {summary['cache_hit_rate']:.0%} of prompt tokens served from cache, "
          f"{stats.device_bytes / 2**20:.1f} MiB on device, {stats.host_bytes / 2**20:.1f} MiB spilled to host")
    if failed:
        for rid, err in failed.items():
            print(f"request {rid} failed: {err}", file=sys.stderr)
        return 1
    return 0
