"""`ttprefill bench ttft`: modeled time to first token of one prompt through the whole model on one chip,
from timing-only simulator runs of every program of every chunk (model/device_stack.py's LayerRunner:
the programs the engine's device stack runs, in the same order, on tensors of the same shapes).

Chunking as the engine does it for a prompt alone on the device (scheduler.lone_request_chunks with
EngineOptions' chunk policy; each chunk's attention reads the growing prefix), with the prefix cache's
checkpoint positions (CheckpointPolicy): the GDN states at positions inside a chunk come out of the
chunk's scan and a row extract of the conv rows, as in the engine. Identical layers run identical
programs, so per chunk one GDN layer and one attention layer are simulated and counted for every layer of
their kind: a GDN layer and the MLP once per distinct (chunk length, checkpoint offsets), an attention
layer once per chunk (its prefix differs). The final norm
and the LM head run once, on the last chunk's last tile row. Weights are shapes only (timing-only: no
values, all control flow, CB and NoC traffic and costs), in the weight format asked for (bfp8 default).

Host traffic is what the device stack moves for such a prompt (DeviceStack.traffic's kinds): per chunk
the embedding rows down (the page table is resident: the page table update program, timed once per chunk,
writes the chunk's new page ids into it from its runtime args, which are dispatch, not host data); the
last token's row of logits up once (the row-extract
program's pages); the GDN states up at each checkpoint (EngineOptions.checkpoint_every_blocks): per GDN layer
the states of all of a chunk's checkpoints, inside it and at its end, in two reads (the scan's checkpoint-state
tensor, and the conv rows of every checkpoint extracted into one tensor). The RoPE tables are resident, uploaded once for the prompt's positions: setup traffic, like the weights.

Each of those transfers is timed over the card's PCIe link (device/host_link.py: bytes at the measured rate
for its page size plus a fixed time per call) on a timeline of two resources, the device's programs and the
link (HostLinkTimeline), in the order the device stack issues them (HOST_OVERLAP_NOTE says what overlaps).
by_op["host"] is the host time the device waits for (`host_transfer.exposed_s`); the rest of the link's time
is `host_transfer.hidden_s`. `device_s` is the programs' time alone.
"""

from __future__ import annotations

import resource
import time



# What of the host transfers hides behind device work, as the engine's device stack issues them.
HOST_OVERLAP_NOTE = (
    "transfers on a second command queue, beside the programs: a GDN layer's two checkpoint reads start when its "
    "GDN block is done (the stack holds the chunk's checkpoint tensors until its end) and the chunk's end waits for "
    "whatever of them is still in flight (the host's checkpoint store); the next chunk's embeddings go down into a "
    "second input buffer at the start of the chunk before it and its first program waits for them. The first "
    "chunk's embeddings and the logits row (which ends the prompt) are waited for at once. One link: transfers "
    "queue behind each other; the PCIe and DRAM traffic a read adds to the programs' is not modeled.")


def _merged(transfers) -> list[dict]:
    """The transfers as JSON, those of the same kind, direction, page size and path summed (bytes and calls)."""
    merged: dict[tuple, dict] = {}
    for t in transfers:
        key = (t.kind, t.direction, t.page_size, t.gathered)
        entry = merged.setdefault(key, {**vars(t), "nbytes": 0, "calls": 0})
        entry["nbytes"] += t.nbytes
        entry["calls"] += t.calls
    return list(merged.values())


def _micro_batched_chunk(sim, s, start, offsets, bounds, block_collectives_s, per_shape, link, total, once,
                         scheduled) -> dict:
    """One chunk as its micro-batches (`bounds`: (offset, tokens) each) with the collectives between their blocks,
    scheduled on the two sub-devices; the device's timeline (`link`) advances layer by layer as the schedule does,
    each GDN layer's checkpoint reads issued when its mixer is done. Adds the programs to `total` and the
    collectives' busy and exposed seconds to `scheduled`."""
    from ttprefill.model.stack import ChunkContext
    from ttprefill.model.tensor_parallel_device import Residual

    from ttprefill.model.device_stack import OpTimes

    from .ttft_micro import MicroBatchRun, SequencedTimes, add_times, block_parts, chunk_schedule
    from .ttft_parts import gdn_and_mlp_times, model_edges

    config, runner, split, gdn_w, attn_w = sim.config, sim.runner, sim.split, sim.gdn_w, sim.attn_w
    n_gdn, n_attn = len(config.gdn_layers), len(config.attention_layers)
    runs, reads_by_mb, collectives = [], [], []
    add_times(total, once)
    programs_s = once.total_s
    for off, tokens in bounds:
        own = tuple(p - off for p in offsets if off < p <= off + tokens)  # a checkpoint at A's end is A's
        x = Residual(s.alloc((split.residual_rows(tokens), config.hidden_size)), tokens)
        normed = s.alloc(x.rows.shape, split.gather_format)  # in the format the gather carries
        edges = OpTimes()
        model_edges(edges, runner, s, x, gdn_w.input_norm, normed)
        gdn_t, mlp_t, reads = gdn_and_mlp_times(per_shape, (tokens, own), runner, SequencedTimes, s, x, gdn_w,
                                                sim.state, own, normed)
        attn = SequencedTimes()
        runner(attn).attention_block(s, x, attn_w, sim.cache, sim.table.tensor,
                                     ChunkContext(start + off, tokens, tuple(range(sim.pages))), sim.rope, normed)
        runs.append(MicroBatchRun(tokens, {"gdn": block_parts(gdn_t), "attention": block_parts(attn)},
                                  block_parts(mlp_t), edges.total_s))
        reads_by_mb.append(reads)
        collectives.append(block_collectives_s(tokens))
        for part, count in ((gdn_t, n_gdn), (mlp_t, n_gdn + n_attn), (attn, n_attn), (edges, 1)):
            add_times(total, part, count)
            programs_s += count * part.total_s
    sched, ends = chunk_schedule(config, runs, collectives)
    scheduled["busy_s"] += sched.busy["collectives"]
    scheduled["exposed_s"] += sched.exposed_collectives_s
    scheduled["hidden_s"] += sched.hidden_collectives_s
    checkpoint_up, done = 0, 0.0
    in_flight = []
    for i in range(config.num_layers):
        after_mixer, after_mlp = sched.end[ends[2 * i]], sched.end[ends[2 * i + 1]]
        if config.is_attention_layer(i):
            link.compute(after_mlp - done)
        else:
            link.compute(after_mixer - done)
            for reads in reads_by_mb:
                for t in reads:
                    in_flight.append(link.issue(t))
                    checkpoint_up += t.nbytes
            link.compute(after_mlp - after_mixer)
        done = after_mlp
    link.wait(in_flight)
    return {"programs_s": programs_s, "scheduled_s": once.total_s + sched.makespan, "micro_batches": len(bounds),
            "checkpoint_up": checkpoint_up, "attention_runs": len(bounds)}


def ttft_bench(model: str = "qwen3.5-9b", seq: int = 8192, weight_format: str | None = None,
               costs: str | None = None, options=None, config=None, chips: int = 1, layer_collectives_s=None,
               head_collectives_s: float = 0.0, split=None, block_collectives_s=None) -> dict:
    """`config` (a ModelConfig) replaces the preset's shapes, e.g. one chip's share of a tensor-parallel split;
    `model` then only names it. On a mesh (bench/ttft_mesh.py) `chips` sets the host links' load, and the
    collectives join the device's timeline (the host link runs beside them too): layer_collectives_s(T) gives
    each layer's (after its mixer, after its MLP) seconds at a chunk of T tokens, head_collectives_s the
    logits gather's. Neither is in `device_s` or `ttft_s` here: the caller adds them. `split`
    (tensor_parallel_device.CollectiveShapes) gives the chip's programs the shapes of the mesh's collective
    scheme: under "reduce_scatter" the chip's residual rows (norms, adds, its share of the embeddings) and the
    gathered rows its projections read. `block_collectives_s(T)` (a mesh with options.micro_batches 2): each
    layer's ((gather, reduce) of its mixer, (gather, reduce) of its MLP) at a micro-batch of T tokens; the whole
    bench then runs on the compute sub-device (sub_device_timing.compute_sub_device_cores) and every chunk's
    micro-batches and collectives are scheduled together (bench/ttft_micro.py): `collective_schedule` says what
    of the collectives the programs hid."""
    from contextlib import nullcontext

    from ttprefill.device.sub_device_timing import compute_sub_device_cores
    from ttprefill.hw import compute_sub_device

    o = options
    micro = block_collectives_s is not None
    if micro and (o is None or o.micro_batches < 2):
        raise ValueError("block_collectives_s schedules micro-batches: give options with micro_batches 2")
    if not micro and o is not None and o.micro_batches > 1:
        raise ValueError("--micro-batches 2 overlaps a mesh's collectives with the programs; give --mesh RxC "
                         "(on one chip there are no collectives to hide)")
    grid, cores = compute_sub_device_cores() if micro else (None, None)
    with compute_sub_device(grid, cores) if micro else nullcontext():
        result = _ttft_bench(model, seq, weight_format, costs, options, config, chips, layer_collectives_s,
                             head_collectives_s, split, block_collectives_s)
    if micro:
        result["collective_schedule"]["compute_grid"] = list(grid)  # the rectangular programs'
        result["collective_schedule"]["compute_cores"] = cores
    return result


def prompt_options(model, seq, weight_format, options, config):
    """The model's config and the engine options a TTFT bench runs (the preset's unless `config` is given, the
    weight format given over `options`), refusing a prompt or model the bench cannot time."""
    from ttprefill.model.config import get_preset
    from ttprefill.options import EngineOptions

    if seq < 1:
        raise ValueError(f"--seq must be positive; got {seq}")
    config = config if config is not None else get_preset(model)
    o = options or EngineOptions()
    if weight_format is not None:
        from dataclasses import replace

        o = replace(o, weight_format=weight_format)
    if seq > config.max_position_embeddings:
        raise ValueError(f"--seq {seq} is past {model}'s {config.max_position_embeddings} positions")
    if not config.attention_layers or not config.gdn_layers:
        raise ValueError(f"{model}: the TTFT bench times a hybrid stack (GDN and attention layers)")
    return config, o


def _ttft_bench(model, seq, weight_format, costs, options, config, chips, layer_collectives_s, head_collectives_s,
                split, block_collectives_s) -> dict:
    from ttprefill.device.sim_device import DEFAULT_COST_SETTING, model_version
    from ttprefill.engine import check_memory_plan
    from ttprefill.model.device_stack import OP_KINDS, OpTimes
    from ttprefill.device.host_link import HostLinkTimeline, HostTransfer
    from ttprefill.options import kv_page_format_name
    from ttprefill.model.micro_batches import micro_batch_bounds

    from .ttft_parts import ChunkSimulator, repeated

    config, o = prompt_options(model, seq, weight_format, options, config)
    check_memory_plan(config, o)  # refuses, with the numbers, a model that does not fit one chip
    costs = costs or DEFAULT_COST_SETTING
    t_start = time.perf_counter()
    micro = block_collectives_s is not None
    sim = ChunkSimulator(config, o, seq, costs, split, marking=micro)
    split = sim.split
    n_gdn, n_attn = len(config.gdn_layers), len(config.attention_layers)
    total = OpTimes()
    link = HostLinkTimeline(costs, chips)  # every host transfer, in the order the engine makes them, beside the programs
    down = {"embeddings": 0}
    setup_down = {"rope_tables": sim.rope.nbytes}
    chunks, checkpoint_up = [], 0
    checkpoints, plan = sim.checkpoints, sim.plan
    embedding_uploads = {}  # chunk index -> its embeddings' handle on the link
    per_micro_shape: dict[tuple, tuple] = {}  # (tokens, offsets) -> a GDN block's and an MLP's runs, their reads
    scheduled = {"busy_s": 0.0, "exposed_s": 0.0, "hidden_s": 0.0}
    for n, chunk in enumerate(plan):
        start, T = chunk.start, chunk.num_tokens
        if micro:
            offsets, end_after = sim.checkpoint_offsets(chunk)
            s, x, once = sim.begin(chunk)  # per chunk, not per layer: the page table update (the ends: per micro-batch)
            embeddings = HostTransfer("embeddings", "down", x.rows.nbytes, x.rows.page_size)
        else:
            parts = sim.chunk(chunk)
            offsets, end_after, embeddings = None, bool(parts.end_reads), parts.embeddings
        down["embeddings"] += embeddings.nbytes
        if n == 0:  # nothing runs before the first chunk to hide its embeddings behind
            embedding_uploads[n] = link.issue(embeddings)
        link.wait([embedding_uploads.pop(n)])  # the chunk's first program needs its input
        if n + 1 < len(plan):  # the next chunk's, into the second input buffer (its last reader is done)
            embedding_uploads[n + 1] = link.issue(sim.embeddings(plan[n + 1].num_tokens, embeddings.page_size))
        if micro:
            try:
                link.compute(once.total_s)
                chunk_s = _micro_batched_chunk(
                    sim, s, start, offsets, micro_batch_bounds(T, o.micro_batches, o.gdn_chunk), block_collectives_s,
                    per_micro_shape, link, total, once, scheduled)
            finally:
                s.free()
            checkpoint_up += chunk_s.pop("checkpoint_up")
            sim.attention_runs += chunk_s.pop("attention_runs")
            if end_after:
                for t in sim.end_reads():
                    link.blocking(repeated(t, n_gdn))
                    checkpoint_up += n_gdn * t.nbytes
            chunks.append({"start": start, "tokens": T, "checkpoints": list(chunk.checkpoints),
                           "modeled_s": chunk_s["programs_s"], "micro_batches": chunk_s["micro_batches"],
                           "scheduled_s": chunk_s["scheduled_s"]})
            continue
        once = OpTimes()  # per chunk, not per layer: the page table update, the model's ends
        for part in (parts.page_table, parts.edges):
            for kind in OP_KINDS:
                once.seconds[kind] += part.seconds[kind]
                once.programs[kind] += part.programs[kind]
        link.compute(once.total_s)
        gdn_t, mlp_t, attn = parts.gdn, parts.gdn_mlp, parts.attention
        collectives = layer_collectives_s(T) if layer_collectives_s else [(0.0, 0.0)] * config.num_layers
        reads = []  # this chunk's checkpoint reads in flight
        for i in range(config.num_layers):
            after_mixer, after_mlp = collectives[i]
            if config.is_attention_layer(i):
                link.compute(attn.total_s + after_mixer + after_mlp)
                continue
            link.compute(gdn_t.total_s + after_mixer)
            # right after its block: the states at the chunk's checkpoints (its end's among them)
            for t in parts.checkpoint_reads:
                reads.append(link.issue(t))
                checkpoint_up += t.nbytes
            link.compute(mlp_t.total_s + after_mlp)
        link.wait(reads)  # the host's checkpoint store at the chunk's end
        # a chunk too short to hold the conv rows reads its end state tensors after it (sync_to_host)
        for t in parts.end_reads:
            link.blocking(repeated(t, n_gdn))
            checkpoint_up += n_gdn * t.nbytes
        chunk_s = 0.0
        for kind in OP_KINDS:
            per_gdn = gdn_t.seconds[kind] + mlp_t.seconds[kind]
            add = n_gdn * per_gdn + n_attn * attn.seconds[kind] + once.seconds[kind]
            total.seconds[kind] += add
            total.programs[kind] += (n_gdn * (gdn_t.programs[kind] + mlp_t.programs[kind])
                                     + n_attn * attn.programs[kind] + once.programs[kind])
            chunk_s += add
        chunks.append({"start": start, "tokens": T, "checkpoints": list(chunk.checkpoints),
                       "modeled_s": chunk_s})
    # the last chunk's final norm and LM head (the tile row of the last token)
    head = sim.head(chunks[-1]["tokens"])
    last = head.times
    logits_up = sum(t.nbytes for t in head.logits)
    link.compute(last.total_s + head_collectives_s)
    for t in head.logits:  # the prompt's end waits for each
        link.blocking(t)
    for kind in OP_KINDS:
        total.seconds[kind] += last.seconds[kind]
        total.programs[kind] += last.programs[kind]
    chunks[-1]["modeled_s"] += last.total_s
    host = link.finish()
    by_op = dict(total.seconds)
    by_op["host"] = host["exposed_s"]  # what the device waited for; the rest ran beside programs (HOST_OVERLAP_NOTE)
    wall = time.perf_counter() - t_start
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "model": model, "seq": seq, "weight_format": o.weight_format, "chunk_tokens": o.tokens_per_chunk,
        "kv_format": kv_page_format_name(o.kv_page_format),
        "matmul_fidelity": o.matmul_fidelity.describe(),
        "costs": costs, "model_version": model_version(), "timing_only": True,
        "ttft_s": total.total_s + host["exposed_s"],
        "device_s": total.total_s,
        "by_op": by_op,
        "programs_per_prefill": dict(total.programs),
        "chunks": chunks,
        "host_traffic": {
            "host_bytes_down": sum(down.values()), "host_bytes_down_by_kind": down,
            "host_bytes_up": logits_up, "checkpoint_bytes_up": checkpoint_up,
            "checkpoints": len(checkpoints), "setup_bytes_down_by_kind": setup_down,
        },
        "host_transfer_s": host["seconds"],
        "host_transfer": {**host, "overlap": HOST_OVERLAP_NOTE},
        "host_transfers": _merged(link.transfers),
        "simulated": {"gdn_layer_and_mlp_runs": len(sim.per_shape) + len(per_micro_shape),
                      "attention_layer_and_mlp_runs": sim.attention_runs, "lm_head_runs": 1},
        "micro_batches": o.micro_batches,
        **({"collective_schedule": {
            "modeled": True, "busy_s": scheduled["busy_s"], "exposed_s": scheduled["exposed_s"],
            "hidden_s": scheduled["hidden_s"], "order": "interleaved (MICRO_BATCH_ORDER)",
            "note": "the layers' collectives on their own sub-device beside the programs of the other micro-batch "
                    "(device/sub_device_timing.py); exposed: what the compute sub-device waited for; the DRAM and "
                    "NoC traffic of the collectives' workers beside the programs is not charged"}} if micro else {}),
        "sim_wall_s": round(wall, 1), "max_rss_mb": round(rss_mb),
        "note": ("modeled by the simulator's timing model (timing-only runs of every program of a chunk); each "
                 "distinct shape simulated once and reused for identical layers: one GDN layer per distinct "
                 "chunk length and checkpoint offsets, and one attention layer per chunk (its prefix grows), counted for every layer of "
                 f"their kind ({n_gdn} GDN, {n_attn} attention); host transfers timed by the PCIe model "
                 "(device/host_link.py) beside the programs, as the engine issues them; host-side scheduling and the "
                 "one-time uploads (weights, RoPE tables) not included"),
    }


def format_ttft(result: dict) -> str:
    t = result["host_traffic"]
    lines = [f"{result['model']}, {result['seq']} tokens in chunks of {result['chunk_tokens']}, "
             f"{result['weight_format']} weights at {result['matmul_fidelity']}, {result['kv_format']} K/V pages, "
             f"timing model {result['model_version']} "
             f"({result['costs']}):",
             f"  modeled TTFT {result['ttft_s'] * 1e3:.1f} ms"]
    for kind, s in result["by_op"].items():
        programs = result["programs_per_prefill"].get(kind)
        what = f"{programs} programs" if programs is not None else "transfers waited for"
        lines.append(f"    {kind:10s} {s * 1e3:9.1f} ms  ({what})")
    for kind, s in result["host_transfer"]["seconds_by_kind"].items():
        lines.append(f"      {kind:20s} {s * 1e3:9.1f} ms")
    lines.append(f"      {'hidden behind programs':20s} {result['host_transfer']['hidden_s'] * 1e3:9.1f} ms")
    lines.append(f"  host traffic: {t['host_bytes_down'] / 1e6:.1f} MB down, {t['host_bytes_up'] / 1e6:.2f} MB up, "
                 f"{t['checkpoint_bytes_up'] / 1e6:.1f} MB of checkpoints up ({t['checkpoints']})")
    lines.append(f"  simulator wall {result['sim_wall_s']} s, max RSS {result['max_rss_mb']} MB")
    lines.append(f"  {result['note']}")
    return "\n".join(lines)
