"""The chunk scheduler: which request computes which tokens in each engine step.

Requests are served first come, first served. The scheduler owns the requests' prefix-cache
bookkeeping: when a request reaches the front it asks the cache for a reservation (the longest
usable cached prefix, pages for the rest, where to store GDN checkpoints); as chunks finish it
publishes their blocks and checkpoints, and it finishes or aborts the reservation. The engine only
runs the chunks it hands out. The uncached tokens are cut into chunks that
  - hold at most max_chunk_tokens tokens (what the device programs are built for),
  - end on a multiple of chunk_alignment unless they end the prompt (whole GDN chunks),
  - fit the per-step token budget, which earlier requests use first.
Checkpoint positions do not cut chunks: a chunk carries the reservation's checkpoint positions in
(start, end], and the engine takes the GDN state at each of them inside the chunk (the scan returns
states at GDN-chunk boundaries within one call; checkpoints are block-aligned, so they are such
boundaries). Large chunks read every weight once per chunk, so fewer chunks is what makes long prompts
fast; the cache's checkpoints stay where they were.
A request has at most one chunk in flight: its next chunk needs the state the previous one left.

A request the cache cannot make room for while others run waits (nobody overtakes it) until they
finish and unpin; one it can never hold fails with the cache's CacheFullError.

In-flight prefix sharing: if a running request is computing blocks that a new request
also starts with, the new request waits until they are published and then finds them in the
cache, instead of computing them a second time. If the running request has not yet passed (nor been
promised: ChunkScheduler.promise) the end of the shared blocks, it is asked (through the cache, which
keeps every request's checkpoint positions) to save a checkpoint there, so the whole shared prefix can
be reused, GDN state included.

Engine loop:

    sched = ChunkScheduler(cache, max_chunk_tokens=512, token_budget_per_step=2048, chunk_alignment=64)
    sched.submit("r1", tokens)
    while sched.has_work:
        for request, chunk in sched.next_step():
            ...on a request's first chunk, start from sched.initial_state(request), then
               sched.release_initial_state(request)...
            ...run chunk.start:chunk.end (request.reservation.page_table), taking the GDN state at
               each position of chunk.checkpoints...
            if sched.chunk_done(request, chunk, {position: (payload, nbytes), ...}):
                ...the prompt is prefilled...
        (on a failure: sched.request_failed(request, error))
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from loguru import logger

from .cache.errors import CacheFullError
from .cache.prefix_cache import Reservation


class RequestState(enum.Enum):
    QUEUED = "queued"  # not admitted yet
    WAITING = "waiting"  # waiting for a running request to publish a prefix it shares
    RUNNING = "running"  # admitted: has a reservation (hit length, checkpoints, pages) and chunks to run
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class Chunk:
    """Prompt tokens [start, end) of one request, run as one piece on the device."""

    request_id: str
    start: int
    end: int
    checkpoints: tuple[int, ...]  # ascending positions in (start, end] whose GDN state goes to the prefix cache
    is_last: bool  # ends the prompt: the engine produces the last token's logits

    @classmethod
    def spanning(cls, request_id: str, start: int, end: int, checkpoints: Sequence[int], num_tokens: int) -> "Chunk":
        """Tokens [start, end) of a prompt of num_tokens, carrying the prompt's checkpoint positions inside them."""
        return cls(request_id, start, end, tuple(p for p in checkpoints if start < p <= end), end == num_tokens)

    @property
    def num_tokens(self) -> int:
        return self.end - self.start

    @property
    def inner_checkpoints(self) -> tuple[int, ...]:
        """Checkpoint positions strictly inside the chunk (taken mid-chunk, not from the state it leaves)."""
        return tuple(p for p in self.checkpoints if p < self.end)


def chunk_end(start: int, num_tokens: int, room: int, alignment: int) -> int | None:
    """Where a chunk of a prompt of num_tokens starting at `start` ends, given `room` tokens (the device's
    chunk, or less of the step's budget left): as far as fits, cut mid-prompt only between GDN chunks of
    `alignment` tokens; None when not one whole GDN chunk fits."""
    end = min(num_tokens, start + room)
    if end < num_tokens:
        end -= end % alignment
    return end if end > start else None


def lone_request_chunks(num_tokens: int, hit_tokens: int, checkpoints: Sequence[int], *, max_chunk_tokens: int,
                        token_budget_per_step: int, chunk_alignment: int, request_id: str = "alone") -> list[Chunk]:
    """The chunks a request running alone gets (the whole step budget each step): what the TTFT benchmark
    runs. checkpoints: the cache's positions for the request (CheckpointPolicy.positions)."""
    chunks, start = [], hit_tokens
    while start < num_tokens:
        end = chunk_end(start, num_tokens, min(max_chunk_tokens, token_budget_per_step), chunk_alignment)
        if end is None:
            raise ValueError(f"no whole GDN chunk of {chunk_alignment} tokens fits {max_chunk_tokens}-token chunks "
                             f"and a step budget of {token_budget_per_step}")
        chunks.append(Chunk.spanning(request_id, start, end, checkpoints, num_tokens))
        start = end
    return chunks


class CacheForScheduler(Protocol):
    """What the scheduler asks of the prefix cache (PrefixCache; tests pass stand-ins)."""

    block_tokens: int

    def chain_keys(self, tokens: Sequence[int]) -> list[bytes]: ...
    def admit(self, request_id: str, tokens: Sequence[int], keys: Sequence[bytes]) -> Reservation: ...
    def add_checkpoint_position(self, reservation: Reservation, position: int) -> None: ...
    def release_initial_state(self, reservation: Reservation) -> None: ...
    def commit_blocks(self, reservation: Reservation, upto_tokens: int) -> None: ...
    def store_checkpoint(self, reservation: Reservation, position: int, payload: Any, nbytes: int) -> Any: ...
    def finish(self, reservation: Reservation) -> None: ...
    def abort(self, reservation: Reservation) -> None: ...


@dataclass(eq=False)
class ScheduledRequest:
    request_id: str
    tokens: tuple[int, ...]
    order: int  # submission order
    block_keys: list[bytes]  # the cache's chain keys of the full blocks (admission, in-flight sharing)
    state: RequestState = RequestState.QUEUED
    reservation: Reservation | None = None  # the cache's, from admission until done or failed
    scheduled_upto: int = 0  # end of the last chunk handed out
    done_upto: int = 0  # end of the last chunk reported done
    in_flight: Chunk | None = None
    # The chunks after the one in flight that the engine has told the device come next (ChunkScheduler.promise):
    # handed out as they are, and no checkpoint is added inside them.
    promised: list[Chunk] = field(default_factory=list)
    waiting_on: str | None = None
    wait_until: int = 0
    deferred_by: CacheFullError | None = None  # why the cache could not admit it at the last try
    error: BaseException | None = None
    computed_tokens: int = 0

    @property
    def num_tokens(self) -> int:
        return len(self.tokens)

    @property
    def hit_tokens(self) -> int:
        return self.reservation.hit_tokens if self.reservation is not None else 0

    @property
    def checkpoints(self) -> list[int]:
        """Sorted positions > hit_tokens where the request stores GDN checkpoints (the reservation's)."""
        return self.reservation.checkpoint_positions if self.reservation is not None else []

    @property
    def planned_upto(self) -> int:
        """End of the chunks whose bounds and checkpoints are fixed: handed out, or promised."""
        return self.promised[-1].end if self.promised else self.scheduled_upto


class SchedulerStalled(RuntimeError):
    """Nothing can ever run: the front request is refused while no other request is running."""

    def __init__(self, message: str, request: ScheduledRequest) -> None:
        super().__init__(message)
        self.request = request


class ChunkScheduler:
    def __init__(
        self,
        cache: CacheForScheduler,
        *,
        max_chunk_tokens: int,
        token_budget_per_step: int,
        chunk_alignment: int,
        share_inflight_prefixes: bool = True,
    ) -> None:
        block_tokens = cache.block_tokens
        for name, value in (
            ("max_chunk_tokens", max_chunk_tokens),
            ("token_budget_per_step", token_budget_per_step),
            ("chunk_alignment", chunk_alignment),
            ("block_tokens", block_tokens),
        ):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if max_chunk_tokens % chunk_alignment:
            raise ValueError(
                f"max_chunk_tokens ({max_chunk_tokens}) must be a multiple of chunk_alignment "
                f"({chunk_alignment}) so that full-size chunks hold whole GDN chunks"
            )
        if token_budget_per_step < chunk_alignment:
            raise ValueError(
                f"token_budget_per_step ({token_budget_per_step}) is smaller than one aligned "
                f"chunk ({chunk_alignment} tokens): no chunk could ever be scheduled"
            )
        if block_tokens % chunk_alignment:
            raise ValueError(
                f"block_tokens ({block_tokens}) must be a multiple of chunk_alignment "
                f"({chunk_alignment}) so that cache hits and checkpoints fall on chunk boundaries"
            )
        self.cache = cache
        self.max_chunk_tokens = max_chunk_tokens
        self.token_budget_per_step = token_budget_per_step
        self.chunk_alignment = chunk_alignment
        self.block_tokens = block_tokens
        self.share_inflight_prefixes = share_inflight_prefixes
        self._order = itertools.count()
        self._queue: list[ScheduledRequest] = []  # QUEUED and WAITING, submission order
        self._running: list[ScheduledRequest] = []  # admission order
        self._requests: dict[str, ScheduledRequest] = {}  # every live request by id

    # ------------------------------------------------------------------ requests in and out

    @property
    def has_work(self) -> bool:
        return bool(self._queue or self._running)

    @property
    def queued(self) -> list[ScheduledRequest]:
        return list(self._queue)

    @property
    def running(self) -> list[ScheduledRequest]:
        return list(self._running)

    def get(self, request_id: str) -> ScheduledRequest | None:
        return self._requests.get(request_id)

    def submit(self, request_id: str, tokens: Sequence[int]) -> ScheduledRequest:
        if len(tokens) == 0:
            raise ValueError(f"request {request_id!r}: empty prompt, it needs at least one token")
        if request_id in self._requests:
            raise ValueError(f"request {request_id!r} is already queued or running")
        tokens = tuple(map(int, tokens))
        request = ScheduledRequest(request_id, tokens, next(self._order), self.cache.chain_keys(tokens))
        self._queue.append(request)
        self._requests[request_id] = request
        return request

    def initial_state(self, request: ScheduledRequest | str) -> Any:
        """The cached GDN checkpoint payload the request starts from (None: zero state).

        The engine copies state out of it, never mutates it, then calls release_initial_state().
        """
        return self._live_reservation(request).initial_state

    def release_initial_state(self, request: ScheduledRequest | str) -> None:
        """The engine has its own copy of the initial state: the cache may spill the checkpoint again."""
        self.cache.release_initial_state(self._live_reservation(request))

    def chunk_done(
        self, request: ScheduledRequest | str, chunk: Chunk,
        checkpoints: dict[int, tuple[Any, int]] | None = None,
    ) -> bool:
        """The engine ran `chunk` (its K/V are in the pages): publish its blocks and, at each position of
        chunk.checkpoints, the checkpoint (payload, nbytes) of the GDN state there, in position order (each
        checkpoint's blocks are published before it). Returns True when that finished the prompt (the
        reservation is then finished in the cache)."""
        request = self._live(request)
        if request.in_flight != chunk:
            raise ValueError(
                f"request {request.request_id!r}: chunk [{chunk.start}, {chunk.end}) is not the "
                "one in flight"
            )
        given = sorted(checkpoints or {})
        if given != list(chunk.checkpoints):
            raise ValueError(
                f"request {request.request_id!r}: chunk [{chunk.start}, {chunk.end}) carries checkpoint "
                f"positions {list(chunk.checkpoints)}; pass the GDN state at exactly those as "
                f"checkpoints={{position: (payload, nbytes)}} (got positions {given})"
            )
        reservation = request.reservation
        for position in chunk.checkpoints:
            self.cache.commit_blocks(reservation, position)
            payload, nbytes = checkpoints[position]
            self.cache.store_checkpoint(reservation, position, payload, nbytes)
        self.cache.commit_blocks(reservation, chunk.end)
        request.in_flight = None
        request.done_upto = chunk.end
        request.computed_tokens += chunk.num_tokens
        if chunk.end < request.num_tokens:
            return False
        self.cache.finish(reservation)
        request.state = RequestState.DONE
        self._running.remove(request)
        del self._requests[request.request_id]
        return True

    def promise(self, request: ScheduledRequest | str, chunks: Sequence[Chunk]) -> None:
        """The engine has told the device that `chunks` come next for `request` (a pipeline's first stages run
        them ahead), so they are handed out as they are, whatever comes in meanwhile (another request, an
        interrupted run): they must follow the chunk handed out last, one after another, with the request's
        checkpoints in them. Chunks promised before stay promised: the new ones must begin with them."""
        request = self._live(request)
        start, chunks = request.scheduled_upto, list(chunks)
        for chunk in chunks:
            expected = Chunk.spanning(request.request_id, start, chunk.end, request.checkpoints, request.num_tokens)
            if chunk != expected or chunk.end > request.num_tokens:
                raise ValueError(f"request {request.request_id!r}: cannot promise chunk [{chunk.start}, {chunk.end}) "
                                 f"with checkpoints {list(chunk.checkpoints)}: the next chunk starts at {start} and "
                                 f"carries the request's checkpoints in it ({list(expected.checkpoints)})")
            start = chunk.end
        kept = request.promised
        if chunks[:len(kept)] != kept[:len(chunks)]:
            raise ValueError(f"request {request.request_id!r}: chunks promised before "
                             f"{[(c.start, c.end) for c in kept]} cannot change")
        if len(chunks) > len(kept):
            request.promised = chunks

    def give_back(self, request: ScheduledRequest | str, chunk: Chunk) -> None:
        """The engine did not start the chunk it was handed (its run stopped before it): it is handed out again as
        it was, next for its request (kept as a promise: the device may have been told it comes)."""
        request = self._live(request)
        if request.in_flight != chunk:
            raise ValueError(f"request {request.request_id!r}: chunk [{chunk.start}, {chunk.end}) is not the one in "
                             "flight")
        request.in_flight = None
        request.scheduled_upto = chunk.start
        request.promised.insert(0, chunk)

    def request_failed(
        self, request: ScheduledRequest | str, error: BaseException | None = None
    ) -> None:
        """Drop a request and abort its reservation; requests waiting on its prefix will compute it
        themselves."""
        request = self._live(request)
        request.state = RequestState.FAILED
        request.error = error
        request.in_flight = None
        for group in (self._queue, self._running):
            if request in group:
                group.remove(request)
        del self._requests[request.request_id]
        if request.reservation is not None:
            self.cache.abort(request.reservation)
        logger.info("scheduler: request {} failed: {}", request.request_id, error)

    def _live(self, request: ScheduledRequest | str) -> ScheduledRequest:
        request_id = request if isinstance(request, str) else request.request_id
        live = self._requests.get(request_id)
        if live is None or (not isinstance(request, str) and live is not request):
            raise ValueError(f"request {request_id!r} is not queued or running")
        return live

    def _live_reservation(self, request: ScheduledRequest | str) -> Reservation:
        request = self._live(request)
        if request.reservation is None:
            raise ValueError(f"request {request.request_id!r} is not admitted yet: it has no reservation")
        return request.reservation

    # ------------------------------------------------------------------ one step

    def next_step(self) -> list[tuple[ScheduledRequest, Chunk]]:
        """Admit what can be admitted, then hand out this step's chunks (earliest requests first).

        If an admission fails (e.g. a prompt the cache can never hold), the request is marked
        failed and removed, and the error propagates; call next_step() again to go on.
        """
        self._admit_ready()
        step = self._plan_chunks()
        if not step and self._queue and not self._running:
            front = self._queue[0]
            raise SchedulerStalled(
                f"request {front.request_id!r} ({front.num_tokens} tokens) cannot be admitted and "
                "nothing else is running to make room; fail it or enlarge the cache"
                + (f" ({front.deferred_by})" if front.deferred_by is not None else ""),
                front,
            )
        return step

    def _admit_ready(self) -> None:
        for request in list(self._queue):
            if request.state is RequestState.WAITING:
                if not self._wait_is_over(request):
                    continue
                request.state = RequestState.QUEUED
                request.waiting_on = None
            if self.share_inflight_prefixes and self._wait_for_inflight_prefix(request):
                continue
            try:
                reservation = self.cache.admit(request.request_id, request.tokens, request.block_keys)
            except CacheFullError as error:
                if error.permanent:
                    self.request_failed(request, error)
                    raise
                request.deferred_by = error
                break  # first come, first served: nobody overtakes a deferred request
            except BaseException as error:
                self.request_failed(request, error)
                raise
            self._start(request, reservation)

    def _start(self, request: ScheduledRequest, reservation: Reservation) -> None:
        request.reservation = reservation  # on errors below, request_failed() aborts it
        request.deferred_by = None
        hit = reservation.hit_tokens
        if not 0 <= hit < request.num_tokens or hit % self.chunk_alignment:
            error = ValueError(
                f"request {request.request_id!r}: admitted with hit_tokens={hit}; it must be a "
                f"multiple of {self.chunk_alignment} below the prompt length {request.num_tokens}"
            )
            self.request_failed(request, error)
            raise error
        # Positions inside the hit are already cached; the chunk plan follows the rest, in order.
        positions = sorted({p for p in reservation.checkpoint_positions if hit < p <= request.num_tokens})
        misaligned = [p for p in positions if p % self.block_tokens]
        if misaligned:
            error = ValueError(
                f"request {request.request_id!r}: checkpoint positions {misaligned} are not "
                f"multiples of block_tokens ({self.block_tokens})"
            )
            self.request_failed(request, error)
            raise error
        reservation.checkpoint_positions[:] = positions
        request.scheduled_upto = request.done_upto = hit
        request.state = RequestState.RUNNING
        self._queue.remove(request)
        self._running.append(request)

    def _plan_chunks(self) -> list[tuple[ScheduledRequest, Chunk]]:
        budget = self.token_budget_per_step
        step: list[tuple[ScheduledRequest, Chunk]] = []
        for request in self._running:
            if request.in_flight is not None or request.scheduled_upto >= request.num_tokens:
                continue
            if request.promised:  # the device has it ahead: a promise is kept, within the budget or not
                chunk = request.promised.pop(0)
            else:
                end = self._chunk_end(request, budget)
                if end is None:
                    continue
                chunk = Chunk.spanning(request.request_id, request.scheduled_upto, end, request.checkpoints,
                                       request.num_tokens)
            request.in_flight = chunk
            request.scheduled_upto = chunk.end
            budget -= chunk.num_tokens
            step.append((request, chunk))
        return step

    def _chunk_end(self, request: ScheduledRequest, budget: int) -> int | None:
        return chunk_end(request.scheduled_upto, request.num_tokens, min(self.max_chunk_tokens, budget),
                         self.chunk_alignment)

    # ------------------------------------------------------------------ in-flight sharing

    def _wait_is_over(self, request: ScheduledRequest) -> bool:
        other = self._requests.get(request.waiting_on)
        return (
            other is None
            or other.state is not RequestState.RUNNING
            or other.done_upto >= request.wait_until
        )

    def _wait_for_inflight_prefix(self, request: ScheduledRequest) -> bool:
        """Make `request` wait if a running request is computing its prefix right now."""
        # The cache never serves a whole prompt (one token is always computed), so neither do we.
        usable_blocks = (request.num_tokens - 1) // self.block_tokens
        best: tuple[int, ScheduledRequest] | None = None
        # Any running request will do: running requests never wait, so waits cannot form a cycle.
        for other in self._running:
            shared = self._shared_blocks(request, other, usable_blocks) * self.block_tokens
            target = self._reuse_point(other, shared)
            if target is not None and (best is None or target > best[0]):
                best = (target, other)
        if best is None:
            return False
        target, other = best
        self.cache.add_checkpoint_position(other.reservation, target)
        request.state = RequestState.WAITING
        request.waiting_on = other.request_id
        request.wait_until = target
        logger.debug(
            "scheduler: {} waits for {} to publish its first {} tokens",
            request.request_id,
            other.request_id,
            target,
        )
        return True

    def _reuse_point(self, other: ScheduledRequest, shared: int) -> int | None:
        """Where `other` will have published (with GDN state) a prefix of the shared part.

        None when waiting would not help: `other` got that prefix from the cache itself, or has
        already published it, or has already passed it (or been promised the chunks past it) without a
        checkpoint on the way.
        """
        if shared <= other.hit_tokens:
            return None
        if other.planned_upto < shared:
            target = shared  # not reached yet (nor promised): it can still save a checkpoint right there
        else:
            passed = [p for p in other.checkpoints if other.hit_tokens < p <= shared]
            if not passed:
                return None
            target = passed[-1]
        return target if other.done_upto < target else None

    @staticmethod
    def _shared_blocks(a: ScheduledRequest, b: ScheduledRequest, limit: int) -> int:
        """Number of leading full blocks two prompts share (at most `limit`).

        Chain keys cover whole prefixes, so equal key i means equal blocks 0..i and a binary
        search finds the first difference.
        """
        low, high = 0, min(limit, len(a.block_keys), len(b.block_keys))
        while low < high:
            middle = (low + high + 1) // 2
            if a.block_keys[middle - 1] == b.block_keys[middle - 1]:
                low = middle
            else:
                high = middle - 1
        return low

    # ------------------------------------------------------------------ invariants

    def check_invariants(self) -> None:
        problems = []
        for request in self._running:
            if request.state is not RequestState.RUNNING:
                problems.append(f"{request.request_id}: in running list but {request.state}")
            progress = (request.hit_tokens, request.done_upto, request.scheduled_upto)
            if sorted(progress) != list(progress) or request.scheduled_upto > request.num_tokens:
                problems.append(f"{request.request_id}: progress out of order")
            chunk = request.in_flight
            if chunk is None and request.done_upto != request.scheduled_upto:
                problems.append(f"{request.request_id}: scheduled tokens with no chunk in flight")
            progress = (request.done_upto, request.scheduled_upto)
            if chunk is not None and (chunk.start, chunk.end) != progress:
                problems.append(f"{request.request_id}: in-flight chunk does not match progress")
            ends = [request.scheduled_upto] + [c.end for c in request.promised]
            if [c.start for c in request.promised] != ends[:-1] or ends[-1] > request.num_tokens:
                problems.append(f"{request.request_id}: promised chunks do not follow the one handed out last")
        for request in self._queue:
            if request.state not in (RequestState.QUEUED, RequestState.WAITING):
                problems.append(f"{request.request_id}: in queue but {request.state}")
        live = {r.request_id for r in self._queue} | {r.request_id for r in self._running}
        if live != set(self._requests) or len(live) != len(self._queue) + len(self._running):
            problems.append("request index does not match the queue and running lists")
        if problems:
            raise AssertionError("scheduler inconsistent: " + "; ".join(problems))
