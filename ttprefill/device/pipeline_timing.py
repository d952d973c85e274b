"""Modeled time of pipeline-parallel forwards: model stages on their own chips, fed through the host (modeled).

Under the pipeline split (model/pipeline_stack.py) stage k of the model's layers runs on chip k of the mesh, a
one-chip device of its own (on a card a 1x1 submesh with its own command queues), and the residual rows a stage
ends a chunk with go to the next stage through the host: read up from chip k, written down to chip k + 1. No
collective runs, so the chips share nothing but the cards' PCIe links.

What one forward (one chunk of the engine's) issues, in the host's order, is a list of steps:

- a program step: one stage's programs on one chunk (their modeled seconds, from the simulator), on the stage's
  program queue; it waits on the device for its input (the transfer step that uploads it);
- a transfer step: one host transfer (device/host_link.py HostTransfer) on the stage's transfer queue (the
  device's second command queue), after the device steps it depends on (a read after the programs whose output
  it reads); transfers of the chips behind one PCIe link share it, one at a time.

Each queue runs its steps in order. The host issues the steps in list order and never waits, except where a step
names `host_waits`: data the host itself must have before it can issue the step (the residual rows a stage
produced in this same forward, which the host reads and then writes to the next stage). A forward ends when every
step it issued is done: the engine's chunk contract needs the chunk's checkpoint states and logits on the host.
The next forward is issued after that; its steps may start no earlier (`start`).

Transfers of the second chip of an n300 cross the first chip's Ethernet (host_link's path for the remote chip):
a transfer to or from an odd chip of a mesh of n300 cards takes the longer of its PCIe and Ethernet legs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ttprefill import hw

from .host_link import HostTransfer, call_seconds, pcie_bytes_per_s

PROGRAM, TRANSFER = "program", "transfer"
STEP_KINDS = (PROGRAM, TRANSFER)


@dataclass(frozen=True)
class Step:
    """One thing the host issues: a stage's programs (`seconds`) or one host transfer (`transfer`)."""

    name: str
    stage: int
    kind: str
    seconds: float = 0.0  # programs: their modeled time; transfers: set from `transfer` by the schedule
    transfer: HostTransfer | None = None
    deps: tuple[str, ...] = ()  # steps it waits for on the device (an input upload; the programs a read reads)
    host_waits: tuple[str, ...] = ()  # steps whose data the host needs before it issues this one


@dataclass
class PipelineTimes:
    """Start and end of each step (seconds from the schedule's origin), each resource's busy time, the end."""

    start: dict[str, float] = field(default_factory=dict)
    end: dict[str, float] = field(default_factory=dict)
    stage_busy: dict[int, float] = field(default_factory=dict)
    link_busy: dict[int, float] = field(default_factory=dict)
    makespan: float = 0.0


def stage_link(stage: int, chips: int) -> int:
    """The PCIe link (the n300 card) a stage's chip sits behind: chips 2i and 2i + 1 share card i's."""
    return stage // hw.CHIPS_PER_PCIE_LINK_N300 if chips > 1 else 0


def stage_transfer_seconds(t: HostTransfer, stage: int, chips: int, costs: str = "central") -> float:
    """One transfer to or from one stage's chip alone: the fixed time of its calls and its bytes over the card's
    PCIe link, or over the first chip's Ethernet where that is slower, for the second chip of an n300."""
    pcie = t.nbytes / pcie_bytes_per_s(t.direction, t.page_size, costs)
    remote = chips > 1 and stage % hw.CHIPS_PER_PCIE_LINK_N300 == 1
    eth = t.nbytes / (hw.ETH_LINK_RAW_BYTES_PER_S * hw.ETH_PAYLOAD_EFFICIENCY_BY_SETTING[costs]) if remote else 0.0
    return t.calls * call_seconds(t.direction, costs) + max(pcie, eth)


def _check(steps: list[Step]) -> None:
    seen: set[str] = set()
    for s in steps:
        if s.kind not in STEP_KINDS:
            raise ValueError(f"step {s.name!r} is a {s.kind!r}; choose one of {', '.join(STEP_KINDS)}")
        if (s.kind == TRANSFER) != (s.transfer is not None):
            raise ValueError(f"step {s.name!r}: a transfer step carries a HostTransfer, a program step none")
        if s.seconds < 0:
            raise ValueError(f"step {s.name!r} takes {s.seconds} s; a time is not negative")
        if s.name in seen:
            raise ValueError(f"step {s.name!r} is issued twice")
        for d in s.deps + s.host_waits:
            if d not in seen:
                raise ValueError(f"step {s.name!r} waits for {d!r}, which is not issued before it")
        seen.add(s.name)


def _first_gap(busy: list[tuple[float, float]], ready: float, seconds: float) -> float:
    """The earliest begin >= ready at which `seconds` fit between the link's transfers; books it."""
    begin = ready
    for b, e in busy:
        if begin + seconds <= b:
            break
        begin = max(begin, e)
    busy.append((begin, begin + seconds))
    busy.sort()
    return begin


def schedule(steps: list[Step], *, chips: int, costs: str = "central", start: float = 0.0,
             stage_free: dict[int, float] | None = None) -> PipelineTimes:
    """Times `steps` (in the host's issue order) on the stages' program queues, their transfer queues and the
    PCIe links; no step starts before `start` (the forward's issue) or before its program queue is free
    (`stage_free`, what earlier forwards left running). Returns every step's start and end and the makespan."""
    _check(steps)
    times = PipelineTimes()
    queue_free: dict[tuple[str, int], float] = {}
    for stage, free in (stage_free or {}).items():
        queue_free[(PROGRAM, stage)] = free
    link_busy: dict[int, list[tuple[float, float]]] = {}  # each link's transfers, (begin, end), sorted
    issued = start
    # The host issues in order; a step's earliest start is its issue time, its queue's last end and its deps'
    # ends. A queue runs its steps in order. A transfer then takes the first time its link is free for it: the
    # links serve whichever queue's transfer is ready, so a transfer issued later but ready sooner (another
    # chip's) goes in a gap before one still waiting for its programs.
    for s in steps:
        issued = max([issued] + [times.end[w] for w in s.host_waits])
        ready = max([issued, queue_free.get((s.kind, s.stage), start)] + [times.end[d] for d in s.deps])
        if s.kind == TRANSFER:
            link = stage_link(s.stage, chips)
            seconds = stage_transfer_seconds(s.transfer, s.stage, chips, costs)
            begin = _first_gap(link_busy.setdefault(link, []), ready, seconds)
            times.link_busy[link] = times.link_busy.get(link, 0.0) + seconds
        else:
            seconds = s.seconds
            begin = ready
            times.stage_busy[s.stage] = times.stage_busy.get(s.stage, 0.0) + seconds
        times.start[s.name], times.end[s.name] = begin, begin + seconds
        queue_free[(s.kind, s.stage)] = begin + seconds
    times.makespan = max([start] + list(times.end.values()))
    return times


# The residual rows a stage ends a chunk with, read up for the next stage (and written down to it): the one
# transfer the split adds, where a tensor-parallel split has its collectives.
HANDOFF = "stage_handoff"


@dataclass(frozen=True)
class StageRun:
    """One stage's programs on one chunk and the host transfers around them."""

    stage: int
    chunk: int  # the chunk's index (in its request, or counted from the forwarded one): unique in a forward
    seconds: float  # the stage's programs on the chunk, modeled
    uploads: tuple[HostTransfer, ...] = ()  # down before the programs (a later stage's input rows: HANDOFF)
    ahead: tuple[HostTransfer, ...] = ()  # down beside the programs, for the stage's next chunk (embeddings ahead)
    reads: tuple[HostTransfer, ...] = ()  # up, each once the programs up to it are done (checkpoint states, logits,
    # HANDOFF rows)
    # per read, the seconds into the programs at which it is issued (a GDN layer's checkpoint states once its block
    # is done, beside the blocks after it, as DeviceStack issues them); empty: every read after all the programs
    read_after_s: tuple[float, ...] = ()

    def __post_init__(self):
        if self.read_after_s and len(self.read_after_s) != len(self.reads):
            raise ValueError(f"stage {self.stage} chunk {self.chunk}: {len(self.read_after_s)} read times for "
                             f"{len(self.reads)} reads")
        if any(not 0 <= t <= self.seconds for t in self.read_after_s):
            raise ValueError(f"stage {self.stage} chunk {self.chunk}: a read is issued inside the programs' "
                             f"{self.seconds} s, got {self.read_after_s}")


def forward_runs(stages: int, known: int, ran: list[int]) -> list[tuple[int, int]]:
    """(stage k, chunk j) of one forward's runs in the order the pipeline stack issues them; j counts from the
    forwarded chunk (0) through the chunks known to come next (known - 1). Stage k runs every chunk it has not
    run yet (it ran ran[k] of them ahead in earlier forwards) up to stages - 1 - k ahead. Issue order: by wavefront
    (j + k), then by stage: a run fed by stage k - 1 comes a wavefront after the run that feeds it, and stage
    k - 1's next run goes out before the host waits for those rows, so every stage has its next run queued while
    the host waits, and a stage holds at most one run beyond the one its successor is about to take (its results
    stay on the device until taken: model/pipeline_stack.py)."""
    if known < 1 or len(ran) != stages:
        raise ValueError(f"a forward knows at least its own chunk and how far each of the {stages} stages ran; "
                         f"got {known} chunks and {ran}")
    runs = [(k, j) for k in range(stages) for j in range(ran[k], min(stages - 1 - k, known - 1) + 1)]
    return sorted(runs, key=lambda r: (r[0] + r[1], r[0]))


def _name(stage: int, chunk: int) -> str:
    return f"s{stage}c{chunk}"


def forward_steps(runs: list[StageRun]) -> list[Step]:
    """The steps of one forward's stage runs, issued in the order given (forward_runs'): a run fed by another run
    of this forward is issued once the host has read that run's rows (host_waits), so it must come after it. A
    run's programs are steps split where its reads are issued (read_after_s), so each read waits only for the
    programs before it."""
    here = {(r.stage, r.chunk) for r in runs}
    if len(here) != len(runs):
        raise ValueError("a forward runs each stage on a chunk at most once")
    issued: set[tuple[int, int]] = set()
    steps: list[Step] = []
    for r in runs:
        name = _name(r.stage, r.chunk)
        fed = r.stage > 0 and (r.stage - 1, r.chunk) in here
        if fed and (r.stage - 1, r.chunk) not in issued:
            raise ValueError(f"stage {r.stage} takes chunk {r.chunk}'s rows from stage {r.stage - 1} in this forward: "
                             "issue that run first")
        if fed and not any(t.kind == HANDOFF for t in r.uploads):
            raise ValueError(f"stage {r.stage} takes chunk {r.chunk}'s rows from stage {r.stage - 1} in this "
                             "forward: give its run the HANDOFF upload")
        waits = (f"{_name(r.stage - 1, r.chunk)}:{HANDOFF}",) if fed else ()
        downs = [Step(f"{name}:down{i}", r.stage, TRANSFER, transfer=t, host_waits=waits if t.kind == HANDOFF else ())
                 for i, t in enumerate(r.uploads)]
        steps += downs
        after = r.read_after_s or (r.seconds,) * len(r.reads)
        cuts = sorted({t for t in after if t < r.seconds})
        bounds = list(zip([0.0] + cuts, cuts + [r.seconds]))
        pieces = [f"{name}@{i}" for i in range(len(bounds) - 1)] + [name]  # the last piece carries the run's name
        for i, (piece, (b, e)) in enumerate(zip(pieces, bounds)):
            steps.append(Step(piece, r.stage, PROGRAM, e - b, deps=tuple(d.name for d in downs) if i == 0 else ()))
            if i == 0:
                steps += [Step(f"{name}:ahead{n}", r.stage, TRANSFER, transfer=t) for n, t in enumerate(r.ahead)]
            steps += [Step(f"{name}:{HANDOFF}" if t.kind == HANDOFF else f"{name}:up{n}", r.stage, TRANSFER,
                           transfer=t, deps=(piece,))
                      for n, (t, at) in enumerate(zip(r.reads, after)) if min(at, r.seconds) == e]
        issued.add((r.stage, r.chunk))
    return steps


def forward_time(runs: list[StageRun], *, chips: int, costs: str = "central", start: float = 0.0) -> PipelineTimes:
    """One forward's schedule from `start` (when the host issues it: the forward before it is done)."""
    return schedule(forward_steps(runs), chips=chips, costs=costs, start=start)
