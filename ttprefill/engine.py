"""The prefill engine: requests in, last-token logits and cache state out.

    engine = Engine.from_preset("tiny", backend="sim")
    result = engine.prefill(tokens)            # one prompt
    ids = [engine.submit(t) for t in prompts]  # or a queue of them
    results = engine.run()

Per step the chunk scheduler hands out chunks; each chunk runs through the model with its
ChunkContext (start position, the request's page table): on a device backend ("sim", "tt") every op is
a device program with weights, K/V pages and GDN states resident (model.device_stack.DeviceStack; what
crosses to and from the host is reported per result); backend "torch" runs the reference stack
(HybridStack with host K/V pages), op for op what the HF oracle checks. The
prefix cache reuses attention pages and GDN checkpoints across requests: a request starts from the
longest cached prefix that ends on a checkpoint, and publishes its own blocks and checkpoints as it
goes. The scheduler does that bookkeeping with the cache; the engine turns GDN state into checkpoint
payloads and back. A failed request is aborted in the cache (its pages freed, its pins dropped), so
the cache stays consistent, and the engine goes on with the others. Settings: EngineOptions. An engine that
opened its device itself closes it (close(), or `with Engine(...) as engine:`); a device passed in stays open.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch
from loguru import logger

from ttprefill.cache.prefix_cache import PrefixCache
from ttprefill.device.program import DataFormat
from ttprefill.model.config import ModelConfig, get_preset
from ttprefill.model.host_mixers import HostMixers
from ttprefill.model.pipeline_split import PIPELINE
from ttprefill.model.stack import ChunkContext, HybridStack, ModelState, UpcomingChunk
from ttprefill.model.weights import random_weights
from ttprefill.ops.attention.shapes import TILE
from ttprefill.options import EngineError, EngineOptions
from ttprefill.scheduler import Chunk, ChunkScheduler, ScheduledRequest, SchedulerStalled, lone_request_chunks

__all__ = ["Engine", "EngineError", "EngineOptions", "PrefillResult", "make_mixers"]


@dataclass
class PrefillResult:
    request_id: str
    tokens: int
    cached_tokens: int  # prompt tokens served from the prefix cache
    last_logits: np.ndarray  # [vocab], fp32
    state: ModelState  # GDN conv/recurrent states after the prompt, for a decoder to continue
    page_table: list[int]  # attention pages of the prompt (owned by the cache once published)
    chunks: int
    wall_s: float
    modeled_device_s: float | None  # sum of the device programs' modeled time (None: the executor models no time)
    host_s: float = 0.0  # engine + scheduler + cache bookkeeping, excluding model compute
    # Host <-> device bytes of this request (device backends; 0 on "torch"): per chunk the embeddings down
    # (page table and RoPE tables are resident), the last token's logits up; GDN states up at checkpoints
    # (and for `state` at the end) and down once when the request starts (from a cached checkpoint or zeros).
    host_bytes_down: int = 0
    host_bytes_up: int = 0
    checkpoint_bytes_up: int = 0
    checkpoint_bytes_down: int = 0


@dataclass
class _Running:
    """The engine's side of a request being prefilled: its model state and what it cost so far."""

    request: ScheduledRequest
    state: ModelState
    started: float
    modeled_s: float = 0.0
    chunks: int = 0
    host_s: float = 0.0
    last_logits: torch.Tensor | None = None
    traffic: dict = field(default_factory=dict)  # result field -> bytes
    state_on_host: bool = True  # the host copy of the GDN states is current


def checkpoint_payload(state: ModelState) -> tuple[dict, int]:
    """GDN states of every layer as numpy copies, and their size in bytes."""
    payload = {
        "num_tokens": state.num_tokens,
        "conv": {i: t.numpy().copy() for i, t in state.conv_states.items()},
        "recurrent": {i: t.numpy().copy() for i, t in state.recurrent_states.items()},
    }
    nbytes = sum(a.nbytes for part in ("conv", "recurrent") for a in payload[part].values())
    return payload, nbytes


def state_from_payload(config: ModelConfig, payload: dict | None, num_tokens: int) -> ModelState:
    state = ModelState.empty(config)
    state.num_tokens = num_tokens
    if payload is None:
        if num_tokens:
            raise EngineError(f"a cache hit of {num_tokens} tokens came without its GDN checkpoint")
        return state
    if payload["num_tokens"] != num_tokens:
        raise EngineError(f"checkpoint holds {payload['num_tokens']} tokens but the hit is {num_tokens}")
    for i, a in payload["conv"].items():
        state.conv_states[i] = torch.from_numpy(a.copy())
    for i, a in payload["recurrent"].items():
        state.recurrent_states[i] = torch.from_numpy(a.copy())
    return state


class Engine:
    def __init__(self, config: ModelConfig, weights: dict[str, np.ndarray], *, backend: str = "sim",
                 options: EngineOptions = EngineOptions(), model_key: str | None = None, device=None,
                 mixers=None):
        self.config = config
        self.options = options
        o = options
        if backend in DEVICE_BACKENDS:
            check_memory_plan(config, o, chips=mesh_chips(device),
                              mesh_shape=device.capabilities.mesh_shape if device is not None else None)
        if not config.attention_layers:
            # The prefix cache's pages are attention K/V: without attention layers there is nothing to page.
            raise EngineError(f"{config.name} has no attention layers; the engine serves hybrid models (its prefix "
                              "cache pages attention K/V): run such a model with ttprefill.model.reference_model")
        self.bytes_per_page = kv_page_bytes(config, o.block_tokens, o.kv_page_format)
        self.cache = prefix_cache(config, o, model_key or f"{config.name}")
        num_pages = self.cache.allocator.num_pages
        self.backend = backend
        self.on_device = backend in DEVICE_BACKENDS
        # Without another engine's stack, make_mixers builds this engine's DeviceStack (weights, K/V pools, a card's
        # sub-devices), which close frees; without a device too, it opens the device, which close also closes.
        self._owns_stack = self.on_device and mixers is None
        self._owns_device = self._owns_stack and device is None
        self._closed = False
        if self.on_device:
            # One DeviceStack holds the weights, K/V pools and live states; an engine may share another's.
            self.mixers = mixers if mixers is not None else make_mixers(backend, config, num_pages, o, device,
                                                                         weights=weights)
            self.model = self.mixers
        else:
            self.mixers = mixers if mixers is not None else make_mixers(backend, config, num_pages, o, device)
            self.model = HybridStack(config, weights, self.mixers)
        try:
            self.scheduler = chunk_scheduler(self.cache, o)
        except BaseException:
            self.close()
            raise
        self._ids = itertools.count(1)
        self._running: dict[str, _Running] = {}
        self.results: dict[str, PrefillResult] = {}
        self.failures: dict[str, BaseException] = {}

    def close(self) -> None:
        """Frees the device stack this engine built (its weights, K/V pools and live states, and the sub-device
        manager it loaded on a card's mesh) and closes the device this engine opened (a card's mesh and its fabric;
        nothing on the simulator). A device passed in stays open, another engine's stack stays built: whoever
        made them ends them. Safe to call twice."""
        self._closed = True
        try:
            if self._owns_stack:
                self._owns_stack = False
                self.model.free()
        finally:
            if self._owns_device:
                from ttprefill.device.backends import close_device

                self._owns_device = False
                close_device(self.model.device)

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @classmethod
    def from_preset(cls, name: str = "tiny", *, seed: int = 0, **kw) -> "Engine":
        config = get_preset(name)
        return cls(config, random_weights(config, seed=seed), model_key=f"{name}:random:{seed}", **kw)

    # ------------------------------------------------------------------ requests
    def validate(self, tokens: Sequence[int]) -> tuple[int, ...]:
        cfg = self.config
        if tokens is None or isinstance(tokens, (str, bytes)) or not hasattr(tokens, "__len__"):
            raise EngineError(f"a prompt is a sequence of integer token ids, got {type(tokens).__name__}")
        if len(tokens) == 0:
            raise EngineError("empty prompt: a request needs at least one token")
        arr = np.asarray(tokens)
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise EngineError(f"tokens must be a 1-D sequence of integer ids, got dtype {arr.dtype} shape {arr.shape}")
        bad = arr[(arr < 0) | (arr >= cfg.vocab_size)]
        if bad.size:
            raise EngineError(f"token id {int(bad[0])} is outside the vocabulary [0, {cfg.vocab_size}) of {cfg.name}")
        if len(arr) > cfg.max_position_embeddings:
            raise EngineError(f"prompt of {len(arr)} tokens is longer than the model's "
                              f"{cfg.max_position_embeddings} positions; truncate it")
        return tuple(int(t) for t in arr)

    def _check_open(self) -> None:
        """New work, and requests queued before close, would run on the freed device stack."""
        if self._closed:
            raise EngineError("this engine is closed (its device stack freed, its device closed): make a new Engine "
                              "and submit the requests to it")

    def submit(self, tokens: Sequence[int], request_id: str | None = None) -> str:
        self._check_open()
        tokens = self.validate(tokens)
        request_id = request_id or f"r{next(self._ids)}"
        self.scheduler.submit(request_id, tokens)
        return request_id

    def prefill(self, tokens: Sequence[int]) -> PrefillResult:
        request_id = self.submit(tokens)
        self.run()
        if request_id in self.failures:
            raise self.failures.pop(request_id)
        return self.results.pop(request_id)

    def run(self, on_result: Callable[[PrefillResult], None] | None = None) -> list[PrefillResult]:
        """Serve every queued request; returns the results in completion order."""
        self._check_open()
        for request in self.scheduler.running:  # chunks a stopped run handed out but did not begin: again
            if request.in_flight is not None:
                self.scheduler.give_back(request, request.in_flight)
        done: list[PrefillResult] = []
        while self.scheduler.has_work:
            t_plan = time.perf_counter()
            step = self._next_step()
            plan_s = time.perf_counter() - t_plan
            for request, chunk in step:
                try:
                    result = self._serve(request, chunk, plan_s / len(step))
                    if result is not None:
                        done.append(result)
                        if on_result:
                            on_result(result)
                except BaseException:  # an interrupt (Ctrl-C) or an error from on_result: the step stops here
                    self._broken_into(request, chunk)
                    raise
        return done

    def _serve(self, request: ScheduledRequest, chunk: Chunk, plan_s: float) -> PrefillResult | None:
        """Runs one chunk of the step; the request's result when that finished it. A failure fails the request."""
        try:
            run = self._running.get(request.request_id) or self._start(request)
            run.host_s += plan_s
            finished = self._run_chunk(run, chunk)
        except Exception as error:  # noqa: BLE001 - any failure fails this request only
            self._fail(request, error)
            return None
        return self._finish(run) if finished else None

    def _broken_into(self, request: ScheduledRequest, chunk: Chunk) -> None:
        """The step stopped at this chunk (an interrupt or an on_result error came through). If it is still in
        flight it may have run part way, and its request's state with it: the request fails. (The step's chunks
        after it were not begun: the next run() hands them out again.)"""
        if self.scheduler.get(request.request_id) is request and request.in_flight == chunk:
            self._fail(request, EngineError(
                f"request {request.request_id} was interrupted while its chunk [{chunk.start}, {chunk.end}) ran: its "
                "model state may be part way through that chunk, so it cannot go on; submit the prompt again (the "
                "prefix cache keeps what its earlier chunks published)"))

    # ------------------------------------------------------------------ internals
    def _next_step(self) -> list[tuple[ScheduledRequest, Chunk]]:
        """The scheduler's next step; a request it cannot admit is failed and recorded, the others go on."""
        pending = {r.request_id: r for r in self.scheduler.queued}
        try:
            return self.scheduler.next_step()
        except SchedulerStalled as stalled:
            front = stalled.request
            error = front.deferred_by or stalled
            self.scheduler.request_failed(front, error)
            self.failures[front.request_id] = error
        except Exception as error:  # noqa: BLE001 - the scheduler has failed the request it was admitting
            failed = [rid for rid, r in pending.items() if r.error is error]
            for rid in failed:
                self.failures[rid] = error
            if not failed:
                raise
        return []

    def _start(self, request: ScheduledRequest) -> _Running:
        """A request's first chunk: its model state from the cached checkpoint it was admitted with."""
        t0 = time.perf_counter()
        state = state_from_payload(self.config, self.scheduler.initial_state(request), request.hit_tokens)
        self.scheduler.release_initial_state(request)
        run = _Running(request, state, t0)
        run.host_s += time.perf_counter() - t0
        self._running[request.request_id] = run
        logger.debug("start {}: {} tokens, {} cached", request.request_id, request.num_tokens, request.hit_tokens)
        return run

    def _run_chunk(self, run: _Running, chunk: Chunk) -> bool:
        request = run.request
        tokens = request.tokens[chunk.start:chunk.end]
        # The GDN states at checkpoints inside the chunk come back in run.state.checkpoints; the one at its
        # end (if asked for) is the state the chunk leaves, brought to the host in the same reads.
        context = ChunkContext(chunk.start, chunk.num_tokens, tuple(request.reservation.page_table),
                               checkpoints=chunk.inner_checkpoints)
        at_end = chunk.end in chunk.checkpoints
        before = self.mixers.modeled_s
        t0 = time.perf_counter()
        if self.on_device:
            traffic = _traffic_snapshot(self.model)
            logits = self.model.forward(tokens, run.state, context, need_logits=chunk.end == request.num_tokens,
                                        sync_end=at_end, upcoming=self._upcoming_chunks(request, chunk))
            run.last_logits = logits if logits is not None else run.last_logits
            run.state_on_host = at_end
            _add_traffic(run.traffic, traffic, _traffic_snapshot(self.model))
        else:
            run.last_logits = self.model.forward(tokens, run.state, context, last_only=True)
        compute_s = time.perf_counter() - t0
        run.modeled_s += self.mixers.modeled_s - before
        run.chunks += 1
        t1 = time.perf_counter()
        states = {**run.state.checkpoints, **({chunk.end: run.state} if at_end else {})}
        run.state.checkpoints = {}
        checkpoints = {p: checkpoint_payload(states[p]) for p in chunk.checkpoints}
        finished = self.scheduler.chunk_done(request, chunk, checkpoints)
        run.host_s += time.perf_counter() - t1
        logger.debug("{}: chunk [{}, {}) in {:.3f} s", request.request_id, chunk.start, chunk.end, compute_s)
        return finished

    def _upcoming_chunks(self, request: ScheduledRequest, chunk: Chunk) -> tuple[UpcomingChunk, ...]:
        """The request's next chunks, as many as the device stack looks ahead (its `lookahead`), when it runs alone
        (the scheduler then gives it the whole step each time: scheduler.lone_request_chunks); empty when it may
        share a step or this chunk ends the prompt. Alone means alone in the scheduler: a request admitted in this
        step but not started yet (its chunk comes after this one) would share the next step. Every device stack
        uploads the first one's embeddings during this chunk, and a pipeline runs its first stages on them and
        refuses a forward that is not what they ran, so the scheduler is promised them (ChunkScheduler.promise): it
        hands them out as they are whatever comes in before the request's next step (a request submitted after an
        interrupted run that shares its prefix gets no checkpoint inside them)."""
        o = self.options
        if chunk.end >= request.num_tokens or len(self.scheduler.running) > 1 or self.scheduler.queued:
            return ()
        ahead = lone_request_chunks(request.num_tokens, chunk.end, request.checkpoints, max_chunk_tokens=o.tokens_per_chunk,
                                    token_budget_per_step=o.step_token_budget, chunk_alignment=o.gdn_chunk,
                                    request_id=request.request_id)[:self.model.lookahead]
        self.scheduler.promise(request, ahead)
        page_table = tuple(request.reservation.page_table)
        return tuple(UpcomingChunk(request.tokens[c.start:c.end],
                                   ChunkContext(c.start, c.num_tokens, page_table, checkpoints=c.inner_checkpoints),
                                   sync_end=c.end in c.checkpoints, need_logits=c.is_last)
                     for c in ahead)

    def _finish(self, run: _Running) -> PrefillResult:
        request = run.request
        rid = request.request_id
        del self._running[rid]
        if self.on_device:
            before = _traffic_snapshot(self.model)
            if not run.state_on_host:  # the result carries the final GDN states for a decoder
                self.model.sync_to_host(run.state)
            self.model.release(run.state)
            _add_traffic(run.traffic, before, _traffic_snapshot(self.model))
        modeled = run.modeled_s if self.mixers.models_time else None
        result = PrefillResult(rid, request.num_tokens, request.hit_tokens,
                               run.last_logits.numpy().astype(np.float32), run.state,
                               list(request.reservation.page_table), run.chunks,
                               time.perf_counter() - run.started, modeled, run.host_s, **run.traffic)
        self.results[rid] = result
        return result

    def _fail(self, request: ScheduledRequest, error: BaseException) -> None:
        rid = request.request_id
        logger.warning("request {} failed: {}", rid, error)
        self.scheduler.request_failed(request, error)
        run = self._running.pop(rid, None)
        if run is not None and self.on_device:
            self.model.release(run.state)
        self.failures[rid] = error


def kv_page_bytes(config: ModelConfig, page_tokens: int, page_format: DataFormat) -> int:
    """Device bytes one page of tokens takes in every attention layer's K and V pools (KVCache's tiles of
    page_tokens x head_dim per kv head, in the page format). The cache budget counts these on every backend."""
    tiles = config.attn_num_kv_heads * -(-page_tokens // TILE) * -(-config.attn_head_dim // TILE)
    return 2 * len(config.attention_layers) * tiles * page_format.tile_bytes


DEVICE_BACKENDS = ("sim", "tt")
# Which kind of host <-> device traffic goes to which PrefillResult field (DeviceStack.traffic's kinds).
_STATE_KINDS = {("up", "gdn_checkpoint"): "checkpoint_bytes_up", ("down", "gdn_state_restore"): "checkpoint_bytes_down"}


def _traffic_snapshot(model) -> dict[tuple[str, str], int]:
    t = model.traffic
    return {**{("down", k): v for k, v in t.down.items()}, **{("up", k): v for k, v in t.up.items()}}


def _add_traffic(into: dict, before: dict, after: dict) -> None:
    for key, value in after.items():
        moved = value - before.get(key, 0)
        if moved:
            field_name = _STATE_KINDS.get(key, f"host_bytes_{key[0]}")
            into[field_name] = into.get(field_name, 0) + moved


def prefix_cache(config: ModelConfig, options: EngineOptions, model_key: str) -> PrefixCache:
    """The engine's prefix cache: as many K/V pages as the cache budget buys, at least one chunk's."""
    o = options
    bytes_per_page = kv_page_bytes(config, o.block_tokens, o.kv_page_format)
    num_pages = o.cache_budget_bytes // bytes_per_page
    pages_per_chunk = -(-o.tokens_per_chunk // o.block_tokens)
    if num_pages < pages_per_chunk:
        raise EngineError(
            f"cache budget of {o.cache_budget_bytes} bytes holds {num_pages} pages of {bytes_per_page} "
            f"bytes, fewer than one chunk of {o.tokens_per_chunk} tokens needs ({pages_per_chunk}); raise the "
            f"budget to at least {pages_per_chunk * bytes_per_page} bytes or lower the chunk size")
    return PrefixCache(num_pages=num_pages, bytes_per_page=bytes_per_page, model_key=model_key,
                       block_tokens=o.block_tokens, page_tokens=o.block_tokens, device_budget=o.cache_budget_bytes,
                       host_budget=o.host_budget_bytes, checkpoint_every_blocks=o.checkpoint_every_blocks)


def chunk_scheduler(cache: PrefixCache, options: EngineOptions) -> ChunkScheduler:
    """The engine's chunk policy (EngineOptions' comment): chunks of up to chunk_tokens, whole GDN chunks."""
    return ChunkScheduler(cache, max_chunk_tokens=options.tokens_per_chunk,
                          token_budget_per_step=options.step_token_budget, chunk_alignment=options.gdn_chunk)


def mesh_chips(device) -> int:
    """The chips the device stack splits the model over: every chip of a mesh (1 without a device yet)."""
    rows, cols = device.capabilities.mesh_shape if device is not None else (1, 1)
    return rows * cols


def check_memory_plan(config: ModelConfig, options: EngineOptions, chips: int = 1,
                      mesh_shape: tuple[int, int] | None = None) -> None:
    """Refuses, with the plan's numbers, a model whose weights, cache budget and working set do not fit one
    chip's DRAM (each chip's share when split tensor-parallel over `chips`, a mesh of `mesh_shape`, (1, chips)
    when None, under options.tp_scheme); runs before any weight goes to the device."""
    from ttprefill.model.memory_plan import MemoryPlanError, plan_memory

    try:
        pages = options.cache_budget_bytes // kv_page_bytes(config, options.block_tokens, options.kv_page_format)
        plan_memory(config, weight_format=options.weight_format, cache_budget_bytes=options.cache_budget_bytes,
                    chunk_tokens=options.tokens_per_chunk, chips=chips, rope_positions=pages * options.block_tokens,
                    gdn_chunk=options.gdn_chunk, block_tokens=options.block_tokens, kv_pages=pages,
                    mesh_shape=mesh_shape, scheme=options.tp_scheme,
                    collective_dtype=options.collective_dtype, parallel=options.parallel).check()
    except MemoryPlanError as error:
        raise EngineError(f"{config.name} {error}") from None


def make_mixers(backend: str, config: ModelConfig, num_pages: int, options: EngineOptions, device=None,
                weights: dict | None = None):
    """What runs the model on a backend: "torch": the stack's mixer cores on the host (K/V in host pages);
    "sim" or "tt": the whole model on the device (DeviceStack, which needs the weights)."""
    if backend == "torch":
        return HostMixers(config, num_pages, options.block_tokens, options.gdn_chunk)
    if backend in DEVICE_BACKENDS:
        from ttprefill.device.backends import close_device, open_device
        from ttprefill.model.device_stack import DeviceStack
        from ttprefill.ops.gdn import CONV_WIDTH, GdnShapeError

        if config.gdn_conv_kernel != CONV_WIDTH:
            raise EngineError(f"{config.name}: the device GDN conv kernel has {CONV_WIDTH} taps, the model's "
                              f"linear_conv_kernel_dim is {config.gdn_conv_kernel}; run it with --backend torch")
        if config.gdn_layers:
            try:
                config.gdn_dims
            except GdnShapeError as error:
                raise EngineError(f"{config.name}: the device GDN kernels cannot run its layers ({error}); "
                                  "run it with --backend torch") from None
        if weights is None:
            raise EngineError("the device backends run the whole model: pass the weights (Engine does)")
        opened = device is None
        device = open_device(backend) if opened else device
        stack_options = dict(page_tokens=options.block_tokens, weight_format=options.weight_format,
                             gdn_chunk=options.gdn_chunk, gdn_fidelity=options.gdn_fidelity,
                             attention_fidelity=options.attention_fidelity, page_format=options.kv_page_format,
                             matmul_fidelity=options.matmul_fidelity)
        try:
            if options.parallel == PIPELINE and mesh_chips(device) > 1:
                from ttprefill.model.pipeline_stack import PipelineStack

                return PipelineStack(config, weights, device, num_pages=num_pages, **stack_options)
            return DeviceStack(config, weights, device, num_pages=num_pages, tp_scheme=options.tp_scheme,
                               micro_batches=options.micro_batches, collective_dtype=options.collective_dtype,
                               **stack_options)
        except BaseException:
            if opened:  # nobody else holds it: a card's mesh is not left open behind the error
                close_device(device)
            raise
    raise EngineError(f"unknown backend {backend!r}: choose sim, tt or torch")
