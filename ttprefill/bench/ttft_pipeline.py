"""`ttprefill bench ttft --mesh RxC --parallel pipeline`: modeled time to first token of the pipeline split, the
model's layers in stages (model/pipeline_split.py stage_layers), stage k on chip k, each a one-chip device stack,
the residual rows handed from stage to stage through the host.

The stages' programs are the one-chip bench's (bench/ttft_parts.py: per chunk one GDN layer with its MLP and one
attention layer with its MLP simulated, timing-only, and counted for every layer of its kind in the stage), plus
each stage's edges: its first layer's input norm runs alone and its last MLP ends with a plain residual add (as
the model's do on one chip); the page table update runs on every stage that holds attention layers, and the last
stage runs the head on the last chunk.

How the pipeline stack issues them (model/pipeline_stack.py, the engine's look-ahead for a lone request): the
engine calls forward(c) for each chunk c in order; in forward(c) stage k runs every chunk it has not run yet up to
min(c + n - 1 - k, N - 1). So the first forward fills the pipeline (stage 0 on chunks 0 .. n - 1, the last stage
on chunk 0) and each later one runs one more chunk on every stage until the chunks run out. Each (stage, chunk)
run is a device/pipeline_timing.py StageRun with its host transfers: stage 0's embeddings (chunk 0's before it;
each next chunk's beside the one before), the rows handed on (HANDOFF: up after stage k's programs, down before
stage k + 1's), each GDN layer's checkpoint reads as its GDN block ends (beside the stage's later blocks), and
the logits row at the end. Each forward is scheduled by pipeline_timing.forward_time from the end of the one
before, its runs in pipeline_timing.forward_runs' issue order; TTFT is the last one's end. No collectives run.
Everything is modeled.
"""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass, replace

CHECKPOINT = "gdn_checkpoint"  # DeviceStack.traffic's kind of the GDN checkpoint reads

SCHEDULE_NOTE = (
    "the engine's forward(c) runs stage k on every chunk it has not run up to c + stages - 1 - k (the look-ahead of a "
    "lone request), each forward scheduled from the end of the one before (device/pipeline_timing.py: a program "
    "and a transfer queue per stage, the cards' PCIe links shared, the second chip of an n300 behind the first's "
    "Ethernet); the runs a forward makes are issued as the pipeline stack issues them (pipeline_timing.forward_runs: "
    "by wavefront, chunk + stage, then by stage, each once the host holds the rows it takes); a stage's GDN layer's "
    "checkpoint reads are issued when its GDN block is done, beside the blocks after it (as DeviceStack issues "
    "them), the hand-off rows and the logits after all of its programs; stage 0 uploads the next chunk's embeddings "
    "beside its programs (its next run does not wait for them: they are far shorter than a chunk's programs); the "
    "DRAM traffic of the transfers beside the programs is not charged")


@dataclass(frozen=True)
class StageShape:
    """The layers of one stage and what of the model's programs it runs."""

    index: int
    layers: range
    gdn: int  # GDN layers
    attention: int  # attention layers
    last: bool  # runs the head on the last chunk
    kinds: tuple[bool, ...] = ()  # each of its layers in order: an attention layer (True) or a GDN layer


def stage_shapes(config, stages: int) -> list[StageShape]:
    from ttprefill.model.pipeline_split import stage_layers

    ranges = stage_layers(config.num_layers, stages)  # refuses more stages than layers
    return [StageShape(k, r, sum(1 for i in r if not config.is_attention_layer(i)),
                       sum(1 for i in r if config.is_attention_layer(i)), k == stages - 1,
                       tuple(config.is_attention_layer(i) for i in r))
            for k, r in enumerate(ranges)]


def stage_programs(stage: StageShape, parts, head=None):
    """One stage's programs on one chunk (`parts`, a ChunkParts) as OpTimes by kind: its layers, its edges, the
    page table update where it has attention layers, and `head` (HeadParts) when given."""
    from ttprefill.model.device_stack import OpTimes

    from .ttft_micro import add_times

    times = OpTimes()
    for part, count in ((parts.gdn, stage.gdn), (parts.gdn_mlp, stage.gdn), (parts.attention, stage.attention),
                        (parts.page_table, 1 if stage.attention else 0), (parts.edges, 1),
                        (head.times if head is not None else None, 1)):
        if part is not None and count:
            add_times(times, part, count)
    return times


def forward_chunks(chunks: int, stages: int) -> list[list[tuple[int, int]]]:
    """The (stage, chunk) runs of each of the engine's forwards, in the pipeline stack's issue order
    (pipeline_timing.forward_runs): forward c knows the chunks up to c + stages - 1 (the engine's look-ahead) and
    runs on stage k every chunk not run yet up to min(c + stages - 1 - k, chunks - 1)."""
    from ttprefill.device.pipeline_timing import forward_runs

    last = [-1] * stages  # each stage's last chunk run
    forwards = []
    for c in range(chunks):
        ran = [max(0, last[k] - c + 1) for k in range(stages)]
        runs = [(k, c + j) for k, j in forward_runs(stages, min(stages, chunks - c), ran)]
        for k, j in runs:
            last[k] = max(last[k], j)
        forwards.append(runs)
    return forwards


def _handoff(parts, direction: str):
    from ttprefill.device.host_link import HostTransfer
    from ttprefill.device.pipeline_timing import HANDOFF

    rows = parts.embeddings  # the residual rows: [T, hidden] bf16 in whole tile rows, as the embeddings
    return HostTransfer(HANDOFF, direction, rows.nbytes, rows.page_size)


def stage_runs(shapes, parts, head, programs, runs, free: frozenset = frozenset()):
    """The StageRuns of one forward's (stage, chunk) `runs`; `programs[k][c]`: stage k's seconds on chunk c.
    Transfers of the kinds in `free` take no time (what they cost is the difference), but keep their place."""
    from ttprefill.device.pipeline_timing import StageRun

    def timed(transfers):
        return tuple(replace(t, nbytes=0, calls=0) if t.kind in free else t for t in transfers)

    n, last_chunk = len(shapes), len(parts) - 1
    out = []
    for k, c in runs:
        p, stage = parts[c], shapes[k]
        uploads = ((p.embeddings,) if c == 0 else ()) if k == 0 else (_handoff(p, "down"),)
        ahead = (parts[c + 1].embeddings,) if k == 0 and c < last_chunk else ()
        # each GDN layer's checkpoint reads once its GDN block is done, beside the blocks after it
        layer_reads = p.checkpoint_reads + p.end_reads
        reads = tuple(t for _ in range(stage.gdn) for t in layer_reads)
        after = tuple(t for t in _gdn_blocks_done_s(stage, p) for _ in layer_reads)
        rows = (_handoff(p, "up"),) if k < n - 1 else head.logits if c == last_chunk else ()
        reads += rows
        after = tuple(min(t, programs[k][c]) for t in after) + (programs[k][c],) * len(rows)
        out.append(StageRun(k, c, programs[k][c], uploads=timed(uploads), ahead=timed(ahead), reads=timed(reads),
                            read_after_s=after))
    return out


def _gdn_blocks_done_s(stage: StageShape, p) -> list[float]:
    """Seconds into a stage's programs on chunk `p` at which each of its GDN layers' GDN block is done, in layer
    order, as DeviceStack runs them: the page table update (where the stage has attention layers), then layer by
    layer, an attention layer's blocks or a GDN layer's GDN block and then its MLP. The edges (the lone first
    norm, the plain last add) are counted at the end: a read issued a norm later than it could be."""
    t = p.page_table.total_s if stage.attention else 0.0
    done = []
    for attention in stage.kinds:
        if attention:
            t += p.attention.total_s
        else:
            t += p.gdn.total_s
            done.append(t)
            t += p.gdn_mlp.total_s
    return done


def schedule_prompt(shapes, parts, head, programs, costs: str, free: frozenset = frozenset()) -> list:
    """Each forward's PipelineTimes, each from the end of the one before."""
    from ttprefill.device.pipeline_timing import forward_time

    start, timed = 0.0, []
    for runs in forward_chunks(len(parts), len(shapes)):
        t = forward_time(stage_runs(shapes, parts, head, programs, runs, free), chips=len(shapes),
                         costs=costs, start=start)
        timed.append(t)
        start = t.makespan
    return timed


def check_pipeline_bench(mesh, micro_batches: int | None = None, fused_collectives: str = "none", scheme=None,
                         collective_dtype=None, topology: str | None = None) -> None:
    """Refuses a mesh without chips and the tensor-parallel split's settings with --parallel pipeline."""
    from ttprefill.model.pipeline_split import check_pipeline_settings

    rows, cols = mesh
    if rows < 1 or cols < 1:
        raise ValueError(f"--mesh {rows}x{cols}: give at least one chip a side")
    check_pipeline_settings(micro_batches, fused_collectives, scheme, collective_dtype, topology)


def pipeline_ttft_bench(model: str, seq: int, mesh: tuple[int, int], weight_format: str | None = None,
                        costs: str | None = None, options=None) -> dict:
    """The pipeline split of `model` over the chips of `mesh` (rows x cols stages: the pipeline needs only the
    chips, not their wiring), one prompt of `seq` tokens alone. Modeled."""
    from ttprefill.device.mesh_timing import MESH_TIMING_VERSION
    from ttprefill.device.pipeline_timing import HANDOFF, stage_transfer_seconds
    from ttprefill.device.sim_device import DEFAULT_COST_SETTING, model_version
    from ttprefill.engine import check_memory_plan
    from ttprefill.model.device_stack import OP_KINDS
    from ttprefill.model.pipeline_split import PIPELINE
    from ttprefill.options import kv_page_format_name

    from .ttft import prompt_options
    from .ttft_parts import ChunkSimulator

    check_pipeline_bench(mesh, options.micro_batches if options is not None else None)
    n = mesh[0] * mesh[1]
    config, o = prompt_options(model, seq, weight_format, options, None)
    o = replace(o, parallel=PIPELINE)
    shapes = stage_shapes(config, n)
    check_memory_plan(config, o, chips=n, mesh_shape=tuple(mesh))  # each stage's chip (the plan's pipeline split)
    costs = costs or DEFAULT_COST_SETTING
    t_start = time.perf_counter()
    sim = ChunkSimulator(config, o, seq, costs)
    parts = [sim.chunk(chunk) for chunk in sim.plan]
    head = sim.head(parts[-1].tokens)
    last_chunk = len(parts) - 1
    times = [[stage_programs(s, p, head if s.last and c == last_chunk else None) for c, p in enumerate(parts)]
             for s in shapes]
    programs = [[t.total_s for t in row] for row in times]
    timed = schedule_prompt(shapes, parts, head, programs, costs)
    ttft = timed[-1].makespan
    # what the hand-offs and the checkpoint reads add to TTFT: the schedule with each of them taking no time
    exposed = {kind: ttft - schedule_prompt(shapes, parts, head, programs, costs, frozenset({kind}))[-1].makespan
               for kind in (HANDOFF, CHECKPOINT)}

    busy = [sum(t.stage_busy.get(k, 0.0) for t in timed) for k in range(n)]
    busiest = max(range(n), key=lambda k: busy[k])
    by_op = {kind: sum(t.seconds[kind] for t in times[busiest]) for kind in OP_KINDS}
    by_op["handoff"] = exposed[HANDOFF]
    by_op["checkpoint_reads"] = exposed[CHECKPOINT]
    by_op["idle"] = ttft - busy[busiest] - exposed[HANDOFF] - exposed[CHECKPOINT]
    link_busy: dict[int, float] = {}
    for t in timed:
        for link, s in t.link_busy.items():
            link_busy[link] = link_busy.get(link, 0.0) + s
    busy_by_kind: dict[str, float] = {}
    bytes_by_kind: dict[str, int] = {}
    for f in forward_chunks(len(parts), n):
        for r in stage_runs(shapes, parts, head, programs, f):
            for tr in r.uploads + r.ahead + r.reads:
                busy_by_kind[tr.kind] = busy_by_kind.get(tr.kind, 0.0) + stage_transfer_seconds(tr, r.stage, n, costs)
                bytes_by_kind[tr.kind] = bytes_by_kind.get(tr.kind, 0) + tr.nbytes
    starts = [0.0] + [t.makespan for t in timed[:-1]]  # each forward is issued when the one before is done
    forwards = [{"chunk": c, "runs": [f"s{k}c{j}" for k, j in runs], "start_s": start, "end_s": t.makespan,
                 "makespan_s": t.makespan - start}
                for c, (runs, t, start) in enumerate(zip(forward_chunks(len(parts), n), timed, starts))]
    wall = time.perf_counter() - t_start
    return {
        "model": model, "seq": seq, "weight_format": o.weight_format, "chunk_tokens": o.tokens_per_chunk,
        "kv_format": kv_page_format_name(o.kv_page_format), "matmul_fidelity": o.matmul_fidelity.describe(),
        "costs": costs, "model_version": model_version(), "mesh_timing_version": MESH_TIMING_VERSION,
        "timing_only": True, "mesh": list(mesh), "parallel": PIPELINE,
        "stages": [{"stage": s.index, "layers": [s.layers.start, s.layers.stop], "gdn_layers": s.gdn,
                    "attention_layers": s.attention} for s in shapes],
        "ttft_s": ttft,
        # the busiest chip's programs: what TTFT cannot go below, and what the rest (bubble_s) is measured from
        "device_s": busy[busiest],
        "busiest_stage": busiest,
        "stage_busy_s": busy,
        "by_op": by_op,
        "bubble_s": ttft - busy[busiest],
        "handoff": {"exposed_s": exposed[HANDOFF], "busy_s": busy_by_kind.get(HANDOFF, 0.0),
                    "bytes": bytes_by_kind.get(HANDOFF, 0)},
        "checkpoint_reads": {"exposed_s": exposed[CHECKPOINT], "busy_s": busy_by_kind.get(CHECKPOINT, 0.0),
                             "bytes": bytes_by_kind.get(CHECKPOINT, 0)},
        "transfer_busy_s": busy_by_kind,
        "link_busy_s": {str(link): s for link, s in sorted(link_busy.items())},
        "forwards": forwards,
        "chunks": [{"start": p.start, "tokens": p.tokens, "checkpoints": list(p.checkpoints),
                    "stage_s": [programs[k][c] for k in range(n)]} for c, p in enumerate(parts)],
        "host_bytes_by_kind": bytes_by_kind,
        "programs_per_prefill": {kind: sum(t.programs[kind] for row in times for t in row) for kind in OP_KINDS},
        "simulated": {"gdn_layer_and_mlp_runs": len(sim.per_shape),
                      "attention_layer_and_mlp_runs": sim.attention_runs, "lm_head_runs": 1},
        "sim_wall_s": round(wall, 1),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "note": (f"modeled: a {n}-stage pipeline split, each stage's programs on its own chip as the one-chip bench "
                 "times them (bench/ttft_parts.py; every stage runs its first layer's norm alone and ends with a plain "
                 "residual add); device_s is the busiest stage's programs, by_op that stage's by kind plus "
                 "'handoff' and 'checkpoint_reads' (what each adds to TTFT: the schedule with and without its "
                 "transfers' time) and 'idle' (the busiest stage's other waiting: pipeline fill and drain, the other "
                 "transfers), summing to ttft_s; "
                 f"schedule: {SCHEDULE_NOTE}; host-side scheduling and one-time uploads not included"),
    }
