"""PipelineStack: the model in pipeline stages over a mesh's chips, the stages working on different chunks at once.

Stage k holds layers pipeline_split.stage_layers(...)[k] on chip k (row-major) as a one-chip DeviceStack of those
layers: their weights, K/V pages and GDN states; the first stage also embeds the tokens, the last also runs the
final norm and the LM head. A chunk's residual rows go from stage k to stage k + 1 through the host (read up from
chip k, written down to chip k + 1, bf16 values either way: the same rows a one-chip stack would carry on), so no
collective runs and no fabric is needed.

The engine forwards a request's chunks one at a time and needs each chunk's checkpoint states and, on the last,
its logits before it goes on, so a stage would sit idle while the others work. When the request runs alone the
engine also gives the chunks that come next (`upcoming`, up to `lookahead` = stages - 1 of them), and stage k then
runs up to stages - 1 - k chunks ahead of the one forwarded: in forward(c) stage 0 runs chunk c + n - 1 while the
last stage runs chunk c. A stage's run is started (DeviceStack.start: its programs and reads issued) and finished
(its reads taken) only when the next stage takes its rows or the forward of its chunk collects it, so the host,
one thread, has every stage's next run queued before it waits for one (on a card the stages then overlap). Its
results (its checkpoint states, its end state when asked for, the rows it hands on) are kept until collected;
each stage keeps its own ModelState (its layers' states and how far it has got), and the engine's ModelState gets
every stage's part when the chunk is collected. The engine promises the scheduler the chunks it gives as
`upcoming` (Engine._upcoming_chunks, ChunkScheduler.promise), so a forward always finds what ran ahead for it; if
one ever did not, forward refuses before running anything.

Time: each forward's stage runs, in the order this stack issues them (device/pipeline_timing.forward_runs), are
scheduled on the stages' chips and the PCIe links with the handoff transfers (pipeline_timing.forward_time); a
forward is issued once the one before it is done. modeled_s is the end of the last forward. As DeviceStack's, it
counts the programs (and the handoffs, which take the place of a tensor-parallel split's collectives), not the
embeddings, checkpoint or logits transfers; `ttprefill bench ttft --parallel pipeline` times those too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np
import torch

from ttprefill.device.executor import run_each
from ttprefill.device.host_link import HostTransfer
from ttprefill.device.pipeline_timing import HANDOFF, StageRun, forward_runs, forward_time
from ttprefill.device.program import DataFormat
from ttprefill.model.config import ModelConfig
from ttprefill.model.device_stack import ChunkTraffic, DeviceStack, DeviceStackError, StartedChunk
from ttprefill.model.pipeline_split import stage_layers
from ttprefill.model.stack import ChunkContext, ModelState, UpcomingChunk
from ttprefill.model.tensor_parallel_device import CollectiveTimes

BF16 = DataFormat.Float16_b


def stage_devices(device) -> list:
    """One one-chip device per chip of `device`, row-major: a simulated mesh's chips, a card mesh's one-chip
    submeshes (TTDevice.stage_devices), or the device itself when it is one chip."""
    rows, cols = device.capabilities.mesh_shape
    if rows * cols == 1:
        return [device]
    if hasattr(device, "stage_devices"):
        return device.stage_devices()
    if hasattr(device, "chip"):
        return [device.chip(r, c) for r in range(rows) for c in range(cols)]
    raise DeviceStackError(f"{type(device).__name__} gives no one-chip device per chip: the pipeline split needs "
                           "a SimMesh or a TTDevice mesh")


@dataclass
class _Ran:
    """One stage's run of one chunk, kept until the forward of that chunk collects it: started (its programs
    issued, its reads in flight), then finished once its rows or its states are needed."""

    chunk: UpcomingChunk  # what it ran
    started: StartedChunk | None  # until finished
    checkpoints: dict[int, ModelState]  # its layers' states at the chunk's inner checkpoints (filled at finish)
    end_state: tuple[dict, dict] | None = None  # its layers' (conv, recurrent) states at the chunk's end, sync_end
    out: object = None  # the rows the next stage starts from, or (last stage) the logits or None


@dataclass
class _Request:
    stage_states: list[ModelState]  # each stage's own: its layers' states, and how far it has got
    ran: list[dict[int, _Ran]] = field(default_factory=list)  # per stage: chunk start -> its run not yet collected


def _same_chunk(a: UpcomingChunk, b: UpcomingChunk) -> bool:
    return (a.context == b.context and a.sync_end == b.sync_end and a.need_logits == b.need_logits
            and tuple(a.tokens) == tuple(b.tokens))


class PipelineStack:
    """The model over a mesh's chips in pipeline stages; forward() has DeviceStack's contract for one chunk."""

    def __init__(self, config: ModelConfig, weights: dict[str, np.ndarray], device, *, num_pages: int, **options):
        """`options`: DeviceStack's (page_tokens, weight_format, fidelities, page_format, ...), for every stage."""
        if options.get("micro_batches", 1) > 1:
            raise DeviceStackError("micro-batches hide a tensor-parallel split's collectives; the pipeline split "
                                   "has none: give micro_batches=1")
        self.config, self.device = config, device
        self.models_time = device.capabilities.models_time
        self.costs = getattr(device, "costs", "central")
        chips = stage_devices(device)
        self.stage_ranges = stage_layers(config.num_layers, len(chips))
        self.lookahead = max(1, len(chips) - 1)
        self.stages: list[DeviceStack] = []
        self._requests: dict[int, tuple[ModelState, _Request]] = {}  # id(engine state) -> (it, its stages' part)
        try:
            for chip, layers in zip(chips, self.stage_ranges):
                self.stages.append(DeviceStack(config, weights, chip, num_pages=num_pages, layers=layers,
                                               **{k: v for k, v in options.items() if k != "micro_batches"}))
        except Exception:
            self.free()
            raise
        self.collectives = CollectiveTimes()  # none: the stages hand rows on through the host
        self._clock = 0.0  # modeled end of the last forward
        self.forwards: list[float] = []  # each forward's modeled seconds

    # ---- what the engine reads
    @property
    def modeled_s(self) -> float:
        return self._clock

    @property
    def traffic(self) -> ChunkTraffic:
        return _summed(s.traffic for s in self.stages)

    @property
    def setup(self) -> ChunkTraffic:
        return _summed(s.setup for s in self.stages)

    def new_state(self) -> ModelState:
        return ModelState.empty(self.config)

    # ---- state
    def _request(self, state: ModelState) -> _Request:
        held = self._requests.get(id(state))
        if held is not None and held[0] is state:
            return held[1]
        parts = []
        for stage in self.stages:  # each stage starts from the engine state's tensors of its layers
            part = ModelState(state.num_tokens)
            part.conv_states = {i: state.conv_states[i] for i in stage.gdn_layers}
            part.recurrent_states = {i: state.recurrent_states[i] for i in stage.gdn_layers}
            parts.append(part)
        request = _Request(parts, [{} for _ in self.stages])
        self._requests[id(state)] = (state, request)
        return request

    def sync_to_host(self, state: ModelState) -> int:
        """Every stage's GDN states into `state`'s host tensors; bytes moved. Refuses while stages have run ahead
        of `state` (their states are then past it)."""
        held = self._requests.get(id(state))
        if held is None or held[0] is not state:
            return 0
        request = held[1]
        if any(request.ran[k] for k in range(len(self.stages))):
            raise DeviceStackError(f"stages have run chunks past position {state.num_tokens}; forward those chunks "
                                   "before reading the state")
        moved = 0
        for stage, part in zip(self.stages, request.stage_states):
            moved += stage.sync_to_host(part)
            state.conv_states.update(part.conv_states)
            state.recurrent_states.update(part.recurrent_states)
        return moved

    def release(self, state: ModelState) -> None:
        held = self._requests.pop(id(state), None)
        if held is not None:  # every run not collected, then every stage's part, even when one step fails
            request = held[1]
            run_each([r.started.abandon for ran in request.ran for r in ran.values() if r.started is not None]
                     + [partial(stage.release, part) for stage, part in zip(self.stages, request.stage_states)])

    def free(self) -> None:
        """Every request's state and every stage's weights and pools, each stage freed even when another fails."""
        run_each([partial(self.release, self._requests[key][0]) for key in list(self._requests)]
                 + [stage.free for stage in self.stages])

    # ---- one chunk
    @torch.no_grad()
    def forward(self, tokens, state: ModelState, context: ChunkContext, need_logits: bool = True,
                sync_end: bool = False, upcoming: tuple[UpcomingChunk, ...] = ()):
        """Runs chunk `context` through every stage (those that ran it ahead already have) and, while the request's
        next chunks are known (`upcoming`), the first stages on them; advances `state` as DeviceStack.forward does
        and returns the last token's logits when need_logits."""
        tokens = tuple(int(t) for t in np.asarray(tokens, np.int64).reshape(-1))
        if len(tokens) != context.num_tokens or context.start != state.num_tokens:
            raise DeviceStackError(f"chunk of {len(tokens)} tokens at {context.start} does not continue a state of "
                                   f"{state.num_tokens} tokens with a context of {context.num_tokens}")
        request = self._request(state)
        wanted = [UpcomingChunk(tokens, context, sync_end, need_logits), *upcoming[:self.lookahead]]
        runs = self._runs(request, wanted)
        timed = []
        for k, j in runs:
            timed.append(self._run(request, k, wanted, j))
        self._time(timed)
        return self._collect(state, request, wanted[0])

    def _finished(self, request: _Request, k: int, start: int) -> _Ran:
        """Stage k's run of the chunk at `start` with its results on the host: its reads waited for (on a card the
        host waits here for that run's programs, while the runs issued after it go on)."""
        ran = request.ran[k][start]
        if ran.started is not None:
            started, ran.started = ran.started, None
            ran.out = started.finish()
            if ran.chunk.sync_end:  # the stage's runs finish in order: its part holds this chunk's end states now
                part = request.stage_states[k]
                ran.end_state = (dict(part.conv_states), dict(part.recurrent_states))
        return ran

    def _runs(self, request: _Request, wanted: list[UpcomingChunk]) -> list[tuple[int, int]]:
        """(stage, index into wanted) of the runs this forward makes, in issue order (pipeline_timing.forward_runs);
        refuses, before anything runs, a forward whose chunks are not those a stage ran ahead."""
        ran = []
        for k, part in enumerate(request.stage_states):
            done = 0
            for chunk in wanted:
                held = request.ran[k].get(chunk.context.start)
                if held is None:
                    break
                if not _same_chunk(held.chunk, chunk):
                    raise DeviceStackError(
                        f"stage {k} ran ahead a different chunk at position {chunk.context.start} than the one now "
                        "forwarded: the engine's look-ahead and its scheduler disagree (nothing was run)")
                done += 1
            position = wanted[done].context.start if done < len(wanted) else wanted[-1].context.end
            if done < len(wanted) and part.num_tokens != position:
                raise DeviceStackError(f"stage {k} is at position {part.num_tokens}, not at the chunk at {position} "
                                       "it would run next (nothing was run)")
            ran.append(done)
        return forward_runs(len(self.stages), len(wanted), ran)

    def _run(self, request: _Request, k: int, wanted: list[UpcomingChunk], j: int) -> StageRun:
        """Stage k on wanted[j]; keeps its results for the forward of that chunk and returns its timing."""
        stage, part, chunk = self.stages[k], request.stage_states[k], wanted[j]
        start = chunk.context.start
        rows = None
        if k > 0:  # the rows the stage before handed on, no longer kept once taken
            before = self._finished(request, k - 1, start)
            rows, before.out = before.out, None
        seconds, moved = stage.modeled_s, _handoff_bytes(stage)
        started = stage.start(chunk.tokens, part, chunk.context, need_logits=chunk.need_logits,
                              sync_end=chunk.sync_end, upcoming=tuple(wanted[j + 1:j + 2]), rows=rows)
        seconds = stage.modeled_s - seconds
        down, up = (after - b for after, b in zip(_handoff_bytes(stage), moved))  # the rows in, the rows out
        request.ran[k][start] = _Ran(chunk, started, part.checkpoints)
        part.checkpoints = {}
        page = BF16.tile_bytes  # the rows are a bf16 tiled tensor
        return StageRun(k, j, seconds, uploads=(HostTransfer(HANDOFF, "down", down, page),) if down else (),
                        reads=(HostTransfer(HANDOFF, "up", up, page),) if up else ())

    def _time(self, runs: list[StageRun]) -> None:
        if not self.models_time or not runs:
            return
        t = forward_time(runs, chips=len(self.stages), costs=self.costs, start=self._clock)
        self.forwards.append(t.makespan - self._clock)
        self._clock = t.makespan

    def _collect(self, state: ModelState, request: _Request, chunk: UpcomingChunk):
        """The forwarded chunk's results from every stage into the engine's `state`; its logits (or None)."""
        start = chunk.context.start
        ran = [self._finished(request, k, start) for k in range(len(self.stages))]
        for k in range(len(self.stages)):
            del request.ran[k][start]
        state.checkpoints = {p: ModelState(p) for p in chunk.context.checkpoints}
        for r in ran:
            for p, part in r.checkpoints.items():
                state.checkpoints[p].conv_states.update(part.conv_states)
                state.checkpoints[p].recurrent_states.update(part.recurrent_states)
            if r.end_state is not None:
                state.conv_states.update(r.end_state[0])
                state.recurrent_states.update(r.end_state[1])
        state.num_tokens += chunk.context.num_tokens
        return ran[-1].out if chunk.need_logits else None


def _handoff_bytes(stage: DeviceStack) -> tuple[int, int]:
    """The residual-row bytes a stage has taken in and handed on so far (its traffic's HANDOFF, down and up)."""
    return stage.traffic.down.get(HANDOFF, 0), stage.traffic.up.get(HANDOFF, 0)


def _summed(parts) -> ChunkTraffic:
    total = ChunkTraffic()
    for t in parts:
        for kind, n in t.down.items():
            total.add("down", kind, n)
        for kind, n in t.up.items():
            total.add("up", kind, n)
    return total
