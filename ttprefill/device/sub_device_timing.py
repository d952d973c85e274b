"""Mesh timing 4: a chunk as two micro-batches whose collectives run beside the other one's programs (modeled).

On a card the chip is split into two ttnn sub-devices: the collectives' worker and fabric mux cores on one, the
programs on the rest (the compute sub-device, `compute_sub_device_cores`). Facts this rests on (sources in
docs/TIMING.md, "Micro-batches on sub-devices"):

- programs on disjoint sub-devices run at the same time from one command queue; the dispatcher launches the
  queue's commands in order and, before a program, stalls until the earlier programs of that program's own
  sub-device are done (tt-metal tech_reports/SubDevices: "stall waiting for all programs to finish on that
  specific sub-device before launching the program"); a dependency across sub-devices is an event the queue
  waits for (ttnn.record_event with sub_device_ids, ttnn.wait_for_event), which stalls the queue as well;
- ttnn's collectives take a sub-device for their workers (all_gather_async / reduce_scatter_minimal_async
  `subdevice_id`), and per link use 2 directions of (workers + 1 fabric mux core): the cores the fused ops take,
  mesh_timing.FUSED_CCL_CORES_PER_LINK, placed on the grid's last cores (a sub-device is any set of cores, and
  ttnn.all_gather's `sub_core_grids` restricts its workers to one); the compute sub-device keeps the rest, 54 of
  64 cores with one link, whose whole rows (8 x 6) the rectangular programs use (`compute_sub_device_cores`);
- the planners lay a program out on the compute grid they are given (hw.compute_sub_device), so the programs
  are simulated on the reduced grid, not scaled.

The schedule (`schedule`): tasks in the order the stack issues them, each on one resource ("compute" or
"collectives"), each launched no earlier than the task issued before it (one in-order queue), than the end of the
last task on its resource, and than the end of each task it depends on. `micro_batch_chunk` builds a chunk's
tasks in the issue order of the interleaved stack (MICRO_BATCH_ORDER). The collectives are timed by the
Ethernet model at the micro-batch's bytes; the programs by the simulator at the micro-batch's tokens.

Not modeled: the DRAM and NoC traffic the collectives' workers add while programs run (`dram_share` bounds it
against the chip's DRAM bandwidth: 7-10 % of it on an n300 at the model's rate), and the dispatch time of the
extra commands (events, two sub-devices' launches).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ttprefill.hw import CLOCK_HZ, DRAM_PEAK_BYTES_PER_CYCLE, ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR, GRID_X, GRID_Y

COMPUTE, COLLECTIVES = "compute", "collectives"
RESOURCES = (COMPUTE, COLLECTIVES)
# How the interleaved stack issues one block (a mixer or an MLP) of micro-batches A and B. X.first: the block's
# first projection(s) (the column-parallel ones that read the gathered rows), X.rest: its programs after them up
# to the row-parallel projection X.proj, X.rs the reduce-scatter of its partial sums, X.norm the residual add fused
# with the next block's norm, X.gather the next block's all-gather of that. Each micro-batch's collectives thereby
# run beside the other's programs: a reduce-scatter beside the other's first projection, a gather beside the
# other's rest and row-parallel projection.
MICRO_BATCH_ORDER = ("A.first", "B.norm(prev)", "B.gather", "A.rest", "A.proj", "A.rs", "B.first", "A.norm",
                     "A.gather(next)", "B.rest", "B.proj", "B.rs")
# (the chunk's first block: A.start, A.gather, then the order above with B.start in B.norm(prev)'s place; the
# device stack's Interleaver issues it so: model/interleave.py, tests/test_sub_device_timing.py)


def compute_sub_device_cores(links: int = ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR) -> tuple[tuple[int, int], int]:
    """The compute sub-device beside the collectives' cores of `links` links, which take the grid's last cores:
    ((columns, rows) of its whole rows, for the programs that need a rectangle; its cores, for the rest)."""
    from ttprefill.device.mesh_timing import FUSED_CCL_CORES_PER_LINK, fused_matmul_grid

    cores = GRID_X * GRID_Y - links * FUSED_CCL_CORES_PER_LINK
    cols, rows = fused_matmul_grid(links)
    return (cols, cores // cols), cores


@dataclass(frozen=True)
class Task:
    name: str
    resource: str
    seconds: float
    deps: tuple[str, ...] = ()


@dataclass
class Schedule:
    """Start and end of every task, in seconds from the schedule's start."""

    start: dict[str, float] = field(default_factory=dict)
    end: dict[str, float] = field(default_factory=dict)
    busy: dict[str, float] = field(default_factory=lambda: {r: 0.0 for r in RESOURCES})
    makespan: float = 0.0

    @property
    def exposed_collectives_s(self) -> float:
        """Time the compute sub-device waits: the makespan beyond its programs."""
        return self.makespan - self.busy[COMPUTE]

    @property
    def hidden_collectives_s(self) -> float:
        return self.busy[COLLECTIVES] - self.exposed_collectives_s


def schedule(tasks: list[Task]) -> Schedule:
    """List-schedules `tasks` (in issue order) on the two resources: in-order launch, one task at a time a
    resource, each after its dependencies."""
    s = Schedule()
    free = {r: 0.0 for r in RESOURCES}
    launched = 0.0
    for t in tasks:
        if t.resource not in RESOURCES:
            raise ValueError(f"task {t.name!r} runs on {t.resource!r}; choose one of {', '.join(RESOURCES)}")
        if t.seconds < 0:
            raise ValueError(f"task {t.name!r} takes {t.seconds} s; a time is not negative")
        missing = [d for d in t.deps if d not in s.end]
        if missing:
            raise ValueError(f"task {t.name!r} depends on {missing[0]!r}, which is not issued before it")
        if t.name in s.end:
            raise ValueError(f"task {t.name!r} is issued twice")
        begin = max([launched, free[t.resource]] + [s.end[d] for d in t.deps])
        s.start[t.name], s.end[t.name] = begin, begin + t.seconds
        free[t.resource] = s.end[t.name]
        s.busy[t.resource] += t.seconds
        launched = begin
    s.makespan = max(s.end.values(), default=0.0)
    return s


@dataclass(frozen=True)
class BlockTimes:
    """One micro-batch's block: its programs (seconds) and the collectives around them."""

    first: float  # the first projection(s), which read the gathered rows
    rest: float  # the programs after them up to the row-parallel projection
    proj: float  # the row-parallel projection
    norm: float  # the residual add (fused with the next norm)
    gather: float  # the all-gather that feeds the block
    reduce_scatter: float  # the reduce-scatter of the projection's partial sums


def micro_batch_chunk(start_s: tuple[float, float], blocks: list[tuple[BlockTimes, BlockTimes]]) -> list[Task]:
    """A chunk's tasks in the interleaved stack's issue order (MICRO_BATCH_ORDER): `start_s` each micro-batch's
    programs before its first block's gather (the first layer's input norm), `blocks` every block's (A, B) in
    order. Block b of B comes after block b of A on the compute sub-device (B's attention reads A's K/V, its scan
    starts from A's state: B's programs after its first projection follow A's); a block's gather waits for the
    norm that ended the block before."""
    if not blocks:
        raise ValueError("a chunk has at least one block")
    t = [Task("A.start", COMPUTE, start_s[0]), Task("A.gather0", COLLECTIVES, blocks[0][0].gather, ("A.start",))]
    for b, (a, bb) in enumerate(blocks):
        t.append(Task(f"A.first{b}", COMPUTE, a.first, (f"A.gather{b}",)))
        if b:
            t += [Task(f"B.norm{b - 1}", COMPUTE, blocks[b - 1][1].norm, (f"B.rs{b - 1}",)),
                  Task(f"B.gather{b}", COLLECTIVES, bb.gather, (f"B.norm{b - 1}",))]
        else:  # B starts one piece behind A: its first norm and gather where later its block-ending ones go
            t += [Task("B.start", COMPUTE, start_s[1]), Task("B.gather0", COLLECTIVES, bb.gather, ("B.start",))]
        t += [Task(f"A.rest{b}", COMPUTE, a.rest), Task(f"A.proj{b}", COMPUTE, a.proj),
              Task(f"A.rs{b}", COLLECTIVES, a.reduce_scatter, (f"A.proj{b}",)),
              Task(f"B.first{b}", COMPUTE, bb.first, (f"B.gather{b}", f"A.rest{b}")),
              Task(f"A.norm{b}", COMPUTE, a.norm, (f"A.rs{b}",))]
        if b + 1 < len(blocks):
            t.append(Task(f"A.gather{b + 1}", COLLECTIVES, blocks[b + 1][0].gather, (f"A.norm{b}",)))
        t += [Task(f"B.rest{b}", COMPUTE, bb.rest), Task(f"B.proj{b}", COMPUTE, bb.proj),
              Task(f"B.rs{b}", COLLECTIVES, bb.reduce_scatter, (f"B.proj{b}",))]
    last = len(blocks) - 1
    t.append(Task(f"B.norm{last}", COMPUTE, blocks[last][1].norm, (f"B.rs{last}",)))
    return t


def serial_chunk(start_s: float, blocks: list[BlockTimes]) -> list[Task]:
    """One micro-batch, as the stack runs a chunk whole: every block's gather, programs, reduce-scatter, norm in
    turn (nothing overlaps: each waits for the one before)."""
    t = [Task("start", COMPUTE, start_s)]
    prev = "start"
    for b, x in enumerate(blocks):
        t += [Task(f"gather{b}", COLLECTIVES, x.gather, (prev,)),
              Task(f"first{b}", COMPUTE, x.first, (f"gather{b}",)), Task(f"rest{b}", COMPUTE, x.rest),
              Task(f"proj{b}", COMPUTE, x.proj),
              Task(f"rs{b}", COLLECTIVES, x.reduce_scatter, (f"proj{b}",)),
              Task(f"norm{b}", COMPUTE, x.norm, (f"rs{b}",))]
        prev = f"norm{b}"
    return t


# DRAM accesses a chip's collective workers make per byte on the busiest link direction: an all-gather reads the
# pages it sends and writes those it receives; a reduce-scatter reads the partial sums it sends, reads its own to
# add to those it receives, and writes the sums.
DRAM_ACCESSES_PER_LINK_BYTE = {"all_gather": 2, "reduce_scatter": 3}


def dram_share(kind: str, link_bytes_per_s: float) -> float:
    """The share of the chip's peak DRAM bandwidth a collective's workers take while it moves `link_bytes_per_s`
    on its busiest link direction: at most what the programs beside it lose where they are DRAM-bound."""
    if kind not in DRAM_ACCESSES_PER_LINK_BYTE:
        raise ValueError(f"no DRAM traffic figure for {kind!r}; choose one of {', '.join(DRAM_ACCESSES_PER_LINK_BYTE)}")
    return DRAM_ACCESSES_PER_LINK_BYTE[kind] * link_bytes_per_s / (DRAM_PEAK_BYTES_PER_CYCLE * CLOCK_HZ)
