"""The prefill engine: requests in, last-token logits and cache state out.

    engine = Engine.from_preset("tiny", backend="sim")
    result = engine.prefill(tokens)            # one prompt
    ids = [engine.submit(t) for t in prompts]  # or a queue of them
    results = engine.run()

Per step the chunk scheduler hands out chunks; per chunk and per layer the host runs the
projections (torch) and the device runs the GDN and attention programs (LayerKernels). The prefix
cache reuses attention pages and GDN checkpoints across requests: a request starts from the longest
cached prefix that ends on a checkpoint, and publishes its own blocks and checkpoints as it goes.
A failed request is aborted in the cache (its pages freed, its pins dropped), so the cache stays
consistent, and the engine goes on with the others.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch
from loguru import logger

from ttprefill.cache.errors import CacheFullError
from ttprefill.cache.prefix_cache import PrefixCache
from ttprefill.device.program import DRAM_BYTES_PER_CHIP
from ttprefill.model.config import ModelConfig, get_preset
from ttprefill.model.paged import PagedHybridModel, TorchKernels
from ttprefill.model.reference_model import ModelState
from ttprefill.model.weights import random_weights
from ttprefill.scheduler import Admission, ChunkScheduler, ScheduledRequest

KV_BYTES_PER_VALUE = 2  # attention pages are bf16 on the device


@dataclass(frozen=True)
class EngineOptions:
    chunk_tokens: int = 256  # largest chunk one device step runs
    block_tokens: int = 64  # prefix-cache block = attention page
    checkpoint_every_blocks: int = 4  # GDN checkpoint every N blocks (and at each prompt's end)
    cache_budget_bytes: int = 256 << 20  # device bytes for pages + device-tier checkpoints
    host_budget_bytes: int = 1 << 30  # spilled checkpoints
    token_budget_per_step: int = 1024
    gdn_chunk: int = 64

    def __post_init__(self):
        # Checked here so that the Python API and the CLI refuse the same bad values with the same words.
        for name in ("chunk_tokens", "block_tokens", "checkpoint_every_blocks", "cache_budget_bytes",
                     "host_budget_bytes", "token_budget_per_step", "gdn_chunk"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise EngineError(f"EngineOptions.{name} must be a positive integer, got {value!r}")
        if self.cache_budget_bytes > DRAM_BYTES_PER_CHIP:
            raise EngineError(
                f"EngineOptions.cache_budget_bytes = {self.cache_budget_bytes} is more than a Wormhole chip's "
                f"{DRAM_BYTES_PER_CHIP} bytes of DRAM, where the K/V pages live; give at most that")


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
    modeled_device_s: float | None  # sum of the device programs' modeled time (None off-simulator)
    host_s: float = 0.0  # engine + scheduler + cache bookkeeping, excluding model compute


@dataclass
class _Running:
    request: ScheduledRequest
    reservation: object
    state: ModelState
    started: float
    modeled_s: float = 0.0
    chunks: int = 0
    host_s: float = 0.0
    last_logits: torch.Tensor | None = None


class EngineError(ValueError):
    """A request the engine refuses; the message names the problem and the fix."""


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
                 kernels=None):
        self.config = config
        self.options = options
        o = options
        if o.chunk_tokens % o.gdn_chunk or o.block_tokens % o.gdn_chunk:
            raise EngineError(f"chunk_tokens ({o.chunk_tokens}) and block_tokens ({o.block_tokens}) must be "
                              f"multiples of the GDN chunk ({o.gdn_chunk})")
        if not config.attention_layers:
            # The prefix cache's pages are attention K/V: without attention layers there is nothing to page.
            raise EngineError(f"{config.name} has no attention layers; the engine serves hybrid models (its prefix "
                              "cache pages attention K/V): run such a model with ttprefill.model.reference_model")
        self.bytes_per_page = (2 * len(config.attention_layers) * o.block_tokens * config.attn_num_kv_heads
                               * config.attn_head_dim * KV_BYTES_PER_VALUE)
        num_pages = o.cache_budget_bytes // self.bytes_per_page
        pages_per_chunk = -(-o.chunk_tokens // o.block_tokens)
        if num_pages < pages_per_chunk:
            raise EngineError(
                f"cache budget of {o.cache_budget_bytes} bytes holds {num_pages} pages of {self.bytes_per_page} "
                f"bytes, fewer than one chunk of {o.chunk_tokens} tokens needs ({pages_per_chunk}); raise the "
                f"budget to at least {pages_per_chunk * self.bytes_per_page} bytes or lower the chunk size")
        self.cache = PrefixCache(num_pages=num_pages, bytes_per_page=self.bytes_per_page,
                                 model_key=model_key or f"{config.name}", block_tokens=o.block_tokens,
                                 page_tokens=o.block_tokens, device_budget=o.cache_budget_bytes,
                                 host_budget=o.host_budget_bytes, checkpoint_every_blocks=o.checkpoint_every_blocks)
        self.backend = backend
        if kernels is None:
            kernels = make_kernels(backend, config, num_pages, o, device)
        self.kernels = kernels
        self.model = PagedHybridModel(config, weights, kernels)
        self.scheduler = ChunkScheduler(o.chunk_tokens, o.token_budget_per_step, o.gdn_chunk,
                                        admit=self._admit, block_tokens=o.block_tokens)
        self._ids = itertools.count(1)
        self._running: dict[str, _Running] = {}
        self.results: dict[str, PrefillResult] = {}
        self.failures: dict[str, BaseException] = {}

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

    def submit(self, tokens: Sequence[int], request_id: str | None = None) -> str:
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
        done: list[PrefillResult] = []
        while self.scheduler.has_work:
            t_plan = time.perf_counter()
            step = self.scheduler.next_step()
            plan_s = time.perf_counter() - t_plan
            for request, chunk in step:
                run = self._running[request.request_id]
                run.host_s += plan_s / max(1, len(step))
                try:
                    self._run_chunk(run, chunk)
                except Exception as error:  # noqa: BLE001 - any failure fails this request only
                    self._fail(run, error)
                    continue
                if self.scheduler.chunk_done(request, chunk):
                    result = self._finish(run)
                    done.append(result)
                    if on_result:
                        on_result(result)
        return done

    # ------------------------------------------------------------------ internals
    def _admit(self, request: ScheduledRequest) -> Admission | None:
        t0 = time.perf_counter()
        hit = self.cache.lookup(request.tokens)
        try:
            reservation = self.cache.begin(request.request_id, request.tokens, hit)
        except CacheFullError:  # begin() has released the hit
            if self._running:
                return None  # try again once running requests finish and unpin
            raise
        try:
            state = state_from_payload(self.config, reservation.initial_state, reservation.hit_tokens)
        except Exception:
            self.cache.abort(reservation)
            raise
        self.cache.release_initial_state(reservation)
        run = _Running(request, reservation, state, time.perf_counter())
        run.host_s += time.perf_counter() - t0
        self._running[request.request_id] = run
        logger.debug("admit {}: {} tokens, {} cached", request.request_id, len(request.tokens), reservation.hit_tokens)
        return Admission(reservation.hit_tokens, reservation.checkpoint_positions, context=reservation)

    def _run_chunk(self, run: _Running, chunk) -> None:
        tokens = run.request.tokens[chunk.start:chunk.end]
        before = getattr(self.kernels, "modeled_s", 0.0)
        t0 = time.perf_counter()
        run.last_logits = self.model.prefill_chunk(tokens, run.state, run.reservation.page_table)
        compute_s = time.perf_counter() - t0
        run.modeled_s += getattr(self.kernels, "modeled_s", 0.0) - before
        run.chunks += 1
        t1 = time.perf_counter()
        self.cache.commit_blocks(run.reservation, chunk.end)
        if chunk.save_checkpoint:
            payload, nbytes = checkpoint_payload(run.state)
            self.cache.store_checkpoint(run.reservation, chunk.end, payload, nbytes)
        run.host_s += time.perf_counter() - t1
        logger.debug("{}: chunk [{}, {}) in {:.3f} s", run.request.request_id, chunk.start, chunk.end, compute_s)

    def _finish(self, run: _Running) -> PrefillResult:
        rid = run.request.request_id
        page_table = list(run.reservation.page_table)
        self.cache.finish(run.reservation)
        del self._running[rid]
        modeled = run.modeled_s if getattr(self.kernels, "models_time", False) else None
        result = PrefillResult(rid, len(run.request.tokens), run.reservation.hit_tokens,
                               run.last_logits.numpy().astype(np.float32), run.state, page_table, run.chunks,
                               time.perf_counter() - run.started, modeled, run.host_s)
        self.results[rid] = result
        return result

    def _fail(self, run: _Running, error: BaseException) -> None:
        rid = run.request.request_id
        logger.warning("request {} failed: {}", rid, error)
        self.cache.abort(run.reservation)
        self.scheduler.request_failed(run.request, error)
        del self._running[rid]
        self.failures[rid] = error


def make_kernels(backend: str, config: ModelConfig, num_pages: int, options: EngineOptions, device=None):
    """The LayerKernels for a backend: "torch" (host reference), "sim" or "tt" (device programs)."""
    if backend == "torch":
        return TorchKernels(config, num_pages, options.block_tokens, options.gdn_chunk)
    if backend in ("sim", "tt"):
        from ttprefill.model.device_kernels import DeviceKernels
        from ttprefill.ops.gdn import CONV_WIDTH

        if config.gdn_conv_kernel != CONV_WIDTH:
            raise EngineError(f"{config.name}: the device GDN conv kernel has {CONV_WIDTH} taps, the model's "
                              f"linear_conv_kernel_dim is {config.gdn_conv_kernel}; run it with --backend torch")

        return DeviceKernels(config, num_pages, options.block_tokens, options.gdn_chunk, backend=backend,
                             device=device)
    raise EngineError(f"unknown backend {backend!r}: choose sim, tt or torch")
