"""bench ttft --mesh RxC --micro-batches 2: one chunk as two micro-batches on the compute sub-device, its
collectives on theirs, scheduled by device/sub_device_timing.py (mesh timing 4). Modeled.

Each micro-batch's blocks are simulated (timing-only) at its own tokens on the reduced grid the collectives'
cores leave (hw.compute_sub_device around the whole bench), and cut into the parts the schedule needs: the
programs up to the row-parallel projection, the projection, and the add + norm that ends the block (a block's
programs report in that order). Identical shapes are simulated once: a GDN layer and the MLP per distinct
(tokens, checkpoint offsets), attention per micro-batch of every chunk (its prefix grows).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ttprefill.device.sub_device_timing import BlockTimes, micro_batch_chunk, schedule, serial_chunk
from ttprefill.model.device_stack import OP_KINDS, LayerRunner, OpTimes

NORM_KINDS = ("norms", "rest")  # the report that ends a block: the fused add + norm, or a plain add
PROJECTION = "|row-parallel projection"  # the mark a block's run carries where its block_output begins


@dataclass
class SequencedTimes(OpTimes):
    """OpTimes that also keep every program's (kind, seconds) in the order the programs ran."""

    sequence: list[tuple[str, float]] = field(default_factory=list)

    def add(self, kind: str, reports) -> None:
        super().add(kind, reports)
        self.sequence += [(kind, r.modeled_s or 0.0) for r in reports]

    def mark(self, label: str) -> None:
        self.sequence.append((label, 0.0))


class MarkingRunner(LayerRunner):
    """The device stack's LayerRunner, marking in a SequencedTimes where each block's row-parallel projection
    (block_output) begins; the same programs otherwise."""

    def block_output(self, *args, **kwargs):
        if isinstance(self.times, SequencedTimes):
            self.times.mark(PROJECTION)
        return super().block_output(*args, **kwargs)


def block_parts(times: SequencedTimes) -> tuple[float, float, float, float]:
    """(the block's first projection(s), its programs after them up to the row-parallel projection, that
    projection, the ending add + norm) of one block's run (MarkingRunner's): a block's programs start with its
    column-parallel projections, and after the mark come the row-parallel projection's row slabs and an add."""
    seq = times.sequence
    kinds = [k for k, _ in seq]
    marks = [i for i, k in enumerate(kinds) if k == PROJECTION]
    if (len(marks) != 1 or not seq or kinds[0] != "matmul" or kinds[-1] not in NORM_KINDS
            or any(k != "matmul" for k in kinds[marks[0] + 1:-1]) or marks[0] + 2 > len(seq) - 1):
        raise ValueError("a block's run starts with a projection and ends, after its one row-parallel projection "
                         f"mark, with that projection and an add + norm; got {kinds}")
    mark = marks[0]
    first_end = 0
    while first_end < mark and kinds[first_end] == "matmul":
        first_end += 1

    def total(a, b):
        return sum(s for _, s in seq[a:b])

    return total(0, first_end), total(first_end, mark), total(mark + 1, len(seq) - 1), seq[-1][1]


@dataclass(frozen=True)
class MicroBatchRun:
    """One micro-batch of a chunk as the schedule needs it: seconds of each block's parts."""

    tokens: int
    mixer: dict  # "gdn" / "attention" -> (first, rest, proj, norm): block_parts
    mlp: tuple[float, float, float, float]
    start: float  # the programs before the first block (the first layer's input norm, the model's edges)


def chunk_schedule(config, runs: list[MicroBatchRun], collectives: list[list[tuple[tuple, tuple]]]):
    """The chunk's schedule: `runs` its micro-batches (one or two), `collectives[m][layer]` = ((gather, rs) of the
    mixer, (gather, rs) of the MLP) at micro-batch m's tokens. Returns (Schedule, names of the task that ends each
    layer's mixer and MLP)."""
    per_mb = []
    for run, coll in zip(runs, collectives):
        blocks = []
        for i in range(config.num_layers):
            mixer = run.mixer["attention" if config.is_attention_layer(i) else "gdn"]
            (mg, mr), (pg, pr) = coll[i]
            blocks.append(BlockTimes(*mixer, gather=mg, reduce_scatter=mr))
            blocks.append(BlockTimes(*run.mlp, gather=pg, reduce_scatter=pr))
        per_mb.append(blocks)
    if len(runs) == 1:
        tasks = serial_chunk(runs[0].start, per_mb[0])
        ends = [f"norm{b}" for b in range(len(per_mb[0]))]
    else:
        tasks = micro_batch_chunk((runs[0].start, runs[1].start), list(zip(per_mb[0], per_mb[1])))
        ends = [f"B.norm{b}" for b in range(len(per_mb[0]))]
    return schedule(tasks), ends


def add_times(total: OpTimes, part: OpTimes, count: int = 1) -> None:
    for kind in OP_KINDS:
        total.seconds[kind] += count * part.seconds[kind]
        total.programs[kind] += count * part.programs[kind]
