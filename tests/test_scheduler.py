"""Chunk scheduler: chunk plans, the per-step budget, FIFO admission and in-flight prefix sharing.

The expected chunk lists below are worked out by hand from the rules in scheduler.py's
docstring. The chunk-plan tests admit through a stand-in cache that hands every prompt the same hit
and checkpoint positions. The integration tests and the state machine give the scheduler a real
PrefixCache and play a fake engine that writes (position, token) into pages and uses the consumed
tokens as GDN state, so a request that reuses another's prefix is checked against its own tokens.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ttprefill.cache import CacheFullError, PrefixCache, blocks, chain_keys
from ttprefill.scheduler import Chunk, ChunkScheduler, RequestState, SchedulerStalled

B = 8  # block tokens
ALIGN = 4  # GDN chunk
PT = 4  # page tokens


class StubCache:
    """Stands in for the prefix cache: admits every prompt with `hit` cached tokens and the given
    checkpoint positions, or as `admit_fn(request_id)` says (a (hit, checkpoints) pair, or it raises)."""

    def __init__(self, hit: int = 0, checkpoints=(), block_tokens: int = B, admit_fn=None) -> None:
        self.block_tokens = block_tokens
        self.admit_fn = admit_fn or (lambda request_id: (hit, checkpoints))
        self.admitted: list[str] = []
        self.aborted: list[str] = []

    def chain_keys(self, tokens):
        return chain_keys(tokens, self.block_tokens, "stub")

    def admit(self, request_id, tokens, keys):
        hit, checkpoints = self.admit_fn(request_id)
        self.admitted.append(request_id)
        return SimpleNamespace(request_id=request_id, hit_tokens=hit, checkpoint_positions=list(checkpoints),
                               initial_state=None, page_table=[])

    def add_checkpoint_position(self, reservation, position):
        if position not in reservation.checkpoint_positions:
            reservation.checkpoint_positions = sorted([*reservation.checkpoint_positions, position])

    def commit_blocks(self, reservation, upto_tokens):
        pass

    def store_checkpoint(self, reservation, position, payload, nbytes):
        pass

    def release_initial_state(self, reservation):
        pass

    def finish(self, reservation):
        pass

    def abort(self, reservation):
        self.aborted.append(reservation.request_id)


def scheduler(max_chunk, budget, cache=None, **cache_options):
    return ChunkScheduler(cache or StubCache(**cache_options), max_chunk_tokens=max_chunk,
                          token_budget_per_step=budget, chunk_alignment=ALIGN)


def spans(step):
    return [(r.request_id, chunk.start, chunk.end, chunk.checkpoints) for r, chunk in step]


def run_to_end(sched: ChunkScheduler) -> list[list[tuple]]:
    steps = []
    while sched.has_work:
        step = sched.next_step()
        steps.append(spans(step))
        for request, chunk in step:
            sched.chunk_done(request, chunk, {p: (("state", p), 1) for p in chunk.checkpoints})
    return steps


# ---------------------------------------------------------------- chunk plans


def test_chunks_fit_the_device_and_carry_the_checkpoints_they_cross():
    sched = scheduler(12, 1000, hit=0, checkpoints=[16, 40, 48])
    sched.submit("a", range(50))
    steps = run_to_end(sched)
    # Full chunks of 12 whatever the checkpoints; each chunk lists the positions in (start, end].
    assert steps == [
        [("a", 0, 12, ())],
        [("a", 12, 24, (16,))],
        [("a", 24, 36, ())],
        [("a", 36, 48, (40, 48))],
        [("a", 48, 50, ())],  # the ragged end of the prompt need not be aligned
    ]


def test_a_prompt_shorter_than_a_chunk_is_one_chunk_with_every_checkpoint():
    sched = scheduler(64, 64, hit=0, checkpoints=[8, 16, 24, 32, 40])
    sched.submit("a", range(41))
    assert run_to_end(sched) == [[("a", 0, 41, (8, 16, 24, 32, 40))]]


def test_checkpoints_are_published_in_position_order_after_their_blocks():
    calls = []

    class RecordingCache(StubCache):
        def commit_blocks(self, reservation, upto_tokens):
            calls.append(("commit", upto_tokens))

        def store_checkpoint(self, reservation, position, payload, nbytes):
            calls.append(("store", position, payload))

    sched = scheduler(32, 100, RecordingCache(checkpoints=[8, 24, 32]))
    request = sched.submit("a", range(40))
    [(_, chunk)] = sched.next_step()
    assert chunk.checkpoints == (8, 24, 32) and chunk.inner_checkpoints == (8, 24)
    with pytest.raises(ValueError, match=r"exactly those.*got positions \[8, 24\]"):
        sched.chunk_done(request, chunk, {8: ("s8", 1), 24: ("s24", 1)})
    assert calls == []  # refused before anything was published
    sched.chunk_done(request, chunk, {32: ("s32", 1), 8: ("s8", 1), 24: ("s24", 1)})
    assert calls == [("commit", 8), ("store", 8, "s8"), ("commit", 24), ("store", 24, "s24"),
                     ("commit", 32), ("store", 32, "s32"), ("commit", 32)]


def test_chunks_start_after_the_hit_and_ignore_checkpoints_inside_it():
    sched = scheduler(16, 1000, hit=8, checkpoints=[8, 16])
    request = sched.submit("a", range(21))
    steps = run_to_end(sched)
    assert steps == [[("a", 8, 21, (16,))]]
    assert request.state is RequestState.DONE and request.computed_tokens == 13


def test_a_budget_cut_keeps_whole_gdn_chunks():
    sched = scheduler(16, 10)
    sched.submit("a", range(30))
    sched.submit("b", range(100, 110))  # shares no prefix with "a", so it does not wait
    steps = run_to_end(sched)
    # 10 tokens a step: "a" takes 8 (aligned), "b" cannot use the 2 left; a prompt end may be
    # ragged, and then "b" gets the 4 left over.
    assert steps == [
        [("a", 0, 8, ())],
        [("a", 8, 16, ())],
        [("a", 16, 24, ())],
        [("a", 24, 30, ()), ("b", 0, 4, ())],
        [("b", 4, 10, ())],
    ]


def test_the_step_budget_goes_to_earlier_requests_first():
    sched = scheduler(16, 24)
    sched.submit("a", range(40))
    sched.submit("b", range(100, 140))
    steps = run_to_end(sched)
    assert steps[0] == [("a", 0, 16, ()), ("b", 0, 8, ())]
    assert steps[1] == [("a", 16, 32, ()), ("b", 8, 16, ())]
    assert steps[2] == [("a", 32, 40, ()), ("b", 16, 32, ())]
    assert steps[3] == [("b", 32, 40, ())]
    assert all(sum(end - start for _, start, end, _ in step) <= 24 for step in steps)


def test_a_request_has_one_chunk_in_flight():
    sched = scheduler(8, 100)
    request = sched.submit("a", range(20))
    [(_, first)] = sched.next_step()
    assert sched.next_step() == []  # its next chunk needs the state the first one leaves
    assert not sched.chunk_done(request, first)
    [(_, second)] = sched.next_step()
    assert (second.start, second.end) == (8, 16)
    with pytest.raises(ValueError, match="not the one in flight"):
        sched.chunk_done(request, first)
    sched.check_invariants()


# ---------------------------------------------------------------- admission


def test_a_deferred_request_is_not_overtaken_and_a_hopeless_one_stalls():
    def admit(request_id):
        if request_id == "big":
            raise CacheFullError("pinned by others", permanent=False)
        return 0, ()

    cache = StubCache(admit_fn=admit)
    sched = scheduler(8, 100, cache)
    sched.submit("big", range(100))
    sched.submit("small", range(5))
    with pytest.raises(SchedulerStalled, match="big"):
        sched.next_step()
    assert cache.admitted == []


def test_a_failing_admission_fails_only_that_request():
    def admit(request_id):
        if request_id == "bad":
            raise CacheFullError("too long", permanent=True)
        return 0, ()

    sched = scheduler(8, 100, admit_fn=admit)
    bad = sched.submit("bad", range(100))
    sched.submit("ok", range(5))
    with pytest.raises(CacheFullError):
        sched.next_step()
    assert bad.state is RequestState.FAILED and isinstance(bad.error, CacheFullError)
    assert spans(sched.next_step()) == [("ok", 0, 5, ())]
    sched.check_invariants()


def test_bad_requests_and_settings_are_refused():
    with pytest.raises(ValueError, match="smaller than one aligned chunk"):
        scheduler(16, 2)
    with pytest.raises(ValueError, match="multiple of chunk_alignment"):
        scheduler(10, 100)
    with pytest.raises(ValueError, match="block_tokens"):
        scheduler(16, 100, block_tokens=6)
    with pytest.raises(ValueError, match="max_chunk_tokens"):
        scheduler(0, 100)

    sched = scheduler(16, 100)
    with pytest.raises(ValueError, match="empty prompt"):
        sched.submit("a", [])
    sched.submit("a", [1])
    with pytest.raises(ValueError, match="already queued"):
        sched.submit("a", [2])
    with pytest.raises(ValueError, match="not queued or running"):
        sched.request_failed("nobody")

    for (hit, checkpoints), message in (
        ((6, ()), "multiple of 4"),  # unaligned hit
        ((16, ()), "below the prompt length"),  # nothing left to compute
        ((0, [12]), "multiples of block_tokens"),
    ):
        cache = StubCache(hit, checkpoints)
        sched = scheduler(16, 100, cache)
        request = sched.submit("a", range(16))
        with pytest.raises(ValueError, match=message):
            sched.next_step()
        assert request.state is RequestState.FAILED and not sched.has_work
        assert cache.aborted == ["a"]  # its reservation is given back


# ---------------------------------------------------------------- with the prefix cache


class Harness:
    """A fake engine around a scheduler that admits through a real PrefixCache."""

    def __init__(self, max_chunk=16, budget=64, share=True, **cache_options) -> None:
        options = dict(
            num_pages=64,
            bytes_per_page=10,
            model_key="tiny-test",
            block_tokens=B,
            page_tokens=PT,
            checkpoint_every_blocks=None,
            host_budget=10_000,
        )
        options.update(cache_options)
        self.cache = PrefixCache(**options)
        self.sched = ChunkScheduler(
            self.cache,
            max_chunk_tokens=max_chunk,
            token_budget_per_step=budget,
            chunk_alignment=ALIGN,
            share_inflight_prefixes=share,
        )
        self.memory: dict[int, dict[int, tuple[int, int]]] = {}
        self.chunks: dict[str, list[Chunk]] = {}
        self.hits: dict[str, int] = {}

    def start(self, request) -> None:
        """A request's first chunk: what it was admitted with must be its own prefix."""
        reservation = request.reservation
        self.hits[request.request_id] = reservation.hit_tokens
        for position in range(reservation.hit_tokens):
            page = reservation.page_table[position // PT]
            assert self.memory[page][position % PT] == (position, request.tokens[position])
        prefix = tuple(request.tokens[: reservation.hit_tokens])
        expected_state = ("gdn", prefix) if reservation.hit_tokens else None
        assert self.sched.initial_state(request) == expected_state
        self.sched.release_initial_state(request)

    def run(self, request, chunk) -> bool:
        reservation = request.reservation
        if request.request_id not in self.chunks:
            self.start(request)
        assert reservation.committed_tokens == chunk.start
        for position in range(chunk.start, chunk.end):
            page = reservation.page_table[position // PT]
            self.memory.setdefault(page, {})[position % PT] = (position, request.tokens[position])
        self.chunks.setdefault(request.request_id, []).append(chunk)
        states = {p: (("gdn", tuple(request.tokens[:p])), 50) for p in chunk.checkpoints}
        return self.sched.chunk_done(request, chunk, states)

    def fail(self, request, error=None) -> None:
        self.sched.request_failed(request, error)

    def drain(self) -> None:
        # Every step computes at least one token, so more steps than tokens left means no progress.
        steps_left = sum(r.num_tokens for r in self.sched.queued + list(self.sched._running)) + 1
        while self.sched.has_work:
            steps_left -= 1
            assert steps_left >= 0, "scheduler makes no progress: more steps than tokens left"
            step = self.sched.next_step()
            # A step that hands out nothing while work remains would repeat forever: a livelock.
            assert step, (f"scheduler livelock: queue {[(r.request_id, r.state.name, r.waiting_on) for r in self.sched.queued]}, "
                          f"running {[(r.request_id, r.scheduled_upto, r.num_tokens) for r in self.sched._running]}")
            for request, chunk in step:
                self.run(request, chunk)
            self.sched.check_invariants()
            self.cache.check_invariants()

    def computed(self) -> int:
        return sum(chunk.num_tokens for chunks in self.chunks.values() for chunk in chunks)


SYSTEM = [(5 * i + 1) % 11 for i in range(32)]  # a shared system prompt of 4 blocks


def test_a_request_waits_for_a_running_request_computing_its_prefix():
    harness = Harness()
    harness.sched.submit("a", SYSTEM + [1] * 10)
    harness.sched.submit("b", SYSTEM + [2] * 7)
    first = harness.sched.next_step()
    assert spans(first) == [("a", 0, 16, ())]  # "b" waits instead of computing the same blocks
    assert harness.sched.get("b").state is RequestState.WAITING
    assert harness.sched.get("a").checkpoints == [32, 40]  # asked to checkpoint the shared end
    for request, chunk in first:
        harness.run(request, chunk)
    harness.drain()
    assert harness.hits == {"a": 0, "b": 32}
    assert [(c.start, c.end) for c in harness.chunks["b"]] == [(32, 39)]
    assert harness.computed() == 42 + 7

    # The same workload without in-flight sharing computes the system prompt twice.
    unshared = Harness(share=False)
    unshared.sched.submit("a", SYSTEM + [1] * 10)
    unshared.sched.submit("b", SYSTEM + [2] * 7)
    unshared.drain()
    assert unshared.hits == {"a": 0, "b": 0} and unshared.computed() == 42 + 39


def test_a_waiting_request_computes_the_prefix_itself_if_the_other_fails():
    harness = Harness()
    harness.sched.submit("a", SYSTEM + [1] * 10)
    harness.sched.submit("b", SYSTEM + [2] * 7)
    [(request_a, chunk)] = harness.sched.next_step()
    harness.run(request_a, chunk)  # blocks 0-1 published, no checkpoint yet
    harness.fail(request_a, RuntimeError("device fault"))
    harness.drain()
    assert harness.hits == {"a": 0, "b": 0}
    assert [(c.start, c.end) for c in harness.chunks["b"]] == [(0, 16), (16, 32), (32, 39)]
    harness.cache.check_invariants()


def test_no_wait_when_the_other_request_is_already_past_the_shared_prefix():
    harness = Harness(max_chunk=48)
    harness.sched.submit("a", SYSTEM + [1] * 10)
    [(request_a, chunk_a)] = harness.sched.next_step()
    # the whole prompt in flight, past 32 without a checkpoint there (its only one is the last block end)
    assert (chunk_a.start, chunk_a.end, chunk_a.checkpoints) == (0, 42, (40,))
    harness.sched.submit("b", SYSTEM + [2] * 7)
    step = harness.sched.next_step()
    assert spans(step) == [("b", 0, 39, (32,))]  # waiting would not give it GDN state at 32
    harness.run(request_a, chunk_a)
    for request, chunk in step:
        harness.run(request, chunk)
    harness.drain()


def test_each_block_of_a_prompt_is_hashed_once(monkeypatch):
    calls = []
    real_hash = blocks.block_hash
    monkeypatch.setattr(blocks, "block_hash", lambda *args: calls.append(args) or real_hash(*args))
    harness = Harness()
    harness.sched.submit("a", SYSTEM + [1] * 10)  # 5 full blocks
    while harness.sched.has_work:  # not drain(): its invariant checks re-hash every block on purpose
        for request, chunk in harness.sched.next_step():
            harness.run(request, chunk)
    assert harness.cache.num_blocks == 5
    assert len(calls) == 5  # at submission; the lookup and the publication use those keys


def test_a_later_request_reuses_the_checkpoint_of_a_finished_one():
    harness = Harness()
    harness.sched.submit("a", SYSTEM + [1] * 10)
    harness.drain()
    harness.sched.submit("b", SYSTEM + [1] * 10 + [3] * 9)  # the next turn of the same chat
    harness.drain()
    assert harness.hits["b"] == 40  # "a" checkpointed its last block end
    assert [(c.start, c.end, c.checkpoints) for c in harness.chunks["b"]] == [(40, 51, (48,))]


# ---------------------------------------------------------------- random sequences

SHARED = [SYSTEM, [(3 * i + 2) % 7 for i in range(40)]]
prompts = st.builds(
    lambda base, cut, tail: (SHARED[base][:cut] + tail) or [1],
    st.integers(0, len(SHARED) - 1),
    st.integers(0, 40),
    st.lists(st.integers(0, 6), max_size=14),
)


class SchedulerMachine(RuleBasedStateMachine):
    """Random submissions, steps, completions and failures through scheduler and cache."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight: list[tuple[object, Chunk]] = []
        self.next_id = 0
        self.waited: dict[str, tuple[str, int]] = {}  # request -> (awaited request, target)
        self.finished_upto: dict[str, int] = {}  # furthest progress of requests that succeeded
        self.promised: dict[tuple[str, int], Chunk] = {}  # (request, start) -> the chunk promised there

    @initialize(
        max_chunk=st.sampled_from([8, 16, 24]),
        budget=st.sampled_from([8, 20, 64]),
        pages=st.sampled_from([24, 64]),
        every=st.sampled_from([None, 2]),
    )
    def setup(self, max_chunk, budget, pages, every):
        self.harness = Harness(
            max_chunk=max_chunk, budget=budget, num_pages=pages, checkpoint_every_blocks=every
        )
        self.sched = self.harness.sched
        self.cache = self.harness.cache

    @rule(prompt=prompts)
    def submit(self, prompt):
        request_id = f"r{self.next_id}"
        self.next_id += 1
        self.sched.submit(request_id, prompt)

    @rule()
    def step(self):
        before = {r.request_id: r.state for r in self.sched.queued}
        try:
            step = self.sched.next_step()
        except CacheFullError as error:  # a prompt larger than the whole cache
            assert error.permanent
            return
        except SchedulerStalled:
            # Only when the front request cannot fit while nothing runs; fail it and go on.
            assert not self.sched.running
            self.sched.request_failed(self.sched.queued[0], None)
            return
        assert sum(chunk.num_tokens for _, chunk in step) <= self.sched.token_budget_per_step
        for request in self.sched.queued:
            if request.state is RequestState.WAITING:
                self.waited[request.request_id] = (request.waiting_on, request.wait_until)
        budget_left = self.sched.token_budget_per_step
        for request, chunk in step:
            if before.get(request.request_id) is not None:
                self.check_admission(request)
            self.check_chunk(request, chunk, budget_left)
            budget_left -= chunk.num_tokens
            self.in_flight.append((request, chunk))

    def check_admission(self, request):
        """A request that waited for another's prefix must now find it in the cache."""
        awaited = self.waited.get(request.request_id)
        stats = self.cache.stats()
        if awaited is None or stats.evicted_blocks or stats.dropped_checkpoints or stats.dropped_hits:
            return
        other, target = awaited
        if self.finished_upto.get(other, 0) >= target:
            assert request.hit_tokens >= target

    def check_chunk(self, request, chunk, budget_left):
        promised = self.promised.pop((request.request_id, chunk.start), None)
        assert promised is None or chunk == promised  # handed out as promised, whatever came in meanwhile
        assert chunk.start == request.done_upto and chunk.num_tokens >= 1
        assert chunk.num_tokens <= self.sched.max_chunk_tokens
        assert chunk.end == request.num_tokens or chunk.end % ALIGN == 0
        assert chunk.is_last == (chunk.end == request.num_tokens)
        # every checkpoint position in (start, end] is carried, nothing else
        assert chunk.checkpoints == tuple(p for p in request.checkpoints if chunk.start < p <= chunk.end)
        # a chunk is cut short only by the prompt's end, the device's size or the step's budget
        # (chunks start aligned, so the cut to whole GDN chunks loses less than ALIGN tokens)
        room = min(self.sched.max_chunk_tokens, budget_left)
        assert chunk.end == request.num_tokens or room - ALIGN < chunk.num_tokens <= room

    @rule()
    def step_and_complete(self):
        """The engine's plain loop: one step, every chunk run and reported."""
        self.step()
        while self.in_flight:
            self._complete(0)

    @precondition(lambda self: self.in_flight)
    @rule(data=st.data())
    def complete(self, data):
        self._complete(data.draw(st.integers(0, len(self.in_flight) - 1)))

    def _complete(self, index):
        request, chunk = self.in_flight.pop(index)
        self.finished_upto[request.request_id] = chunk.end
        done = self.harness.run(request, chunk)
        if done:
            ran = self.harness.chunks[request.request_id]
            assert ran[0].start == request.hit_tokens and ran[-1].end == request.num_tokens
            assert all(a.end == b.start for a, b in zip(ran, ran[1:]))
            carried = [p for c in ran for p in c.checkpoints]
            assert carried == sorted(set(carried)) and set(request.checkpoints) <= set(carried)

    @precondition(lambda self: len(self.in_flight) == 1 and len(self.sched.running) == 1 and not self.sched.queued)
    @rule(count=st.integers(1, 2))
    def promise(self, count):
        """The engine's look-ahead: a request running alone is promised its next chunks while one is in flight."""
        request, _ = self.in_flight[0]
        for chunk in _promise_next(self.sched, request, count):
            self.promised[(request.request_id, chunk.start)] = chunk

    @precondition(lambda self: self.in_flight)
    @rule(data=st.data())
    def fail_chunk(self, data):
        request, _ = self.in_flight.pop(data.draw(st.integers(0, len(self.in_flight) - 1)))
        self.finished_upto.pop(request.request_id, None)
        self.harness.fail(request, RuntimeError("injected"))

    @precondition(lambda self: self.sched.queued)
    @rule(data=st.data())
    def cancel_queued(self, data):
        request = data.draw(st.sampled_from(self.sched.queued))
        self.sched.request_failed(request, None)

    @invariant()
    def consistent(self):
        self.sched.check_invariants()
        self.cache.check_invariants()

    def teardown(self):
        for request, chunk in self.in_flight:
            self.harness.run(request, chunk)
        self.in_flight = []
        try:
            self.harness.drain()
        except (SchedulerStalled, CacheFullError):
            pass
        for request in self.sched.running + self.sched.queued:
            self.harness.fail(request)
        assert not self.sched.has_work
        self.cache.check_invariants()
        self.cache.evict_lru(10_000)
        assert self.cache.allocator.num_used == 0


TestSchedulerMachine = SchedulerMachine.TestCase
TestSchedulerMachine.settings = settings(
    max_examples=60,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_a_lone_request_gets_the_chunks_the_scheduler_hands_out():
    """lone_request_chunks (what the TTFT benchmark runs) against a scheduler serving the request alone."""
    from ttprefill.scheduler import lone_request_chunks

    for max_chunk, budget, hit, n in ((12, 1000, 0, 50), (16, 10, 8, 45), (64, 64, 0, 41), (24, 100, 16, 17)):
        checkpoints = [p for p in (8, 16, 24, 40, 48) if hit < p <= n]
        sched = scheduler(max_chunk, budget, hit=hit, checkpoints=checkpoints)
        sched.submit("a", range(n))
        handed = [step[0][1:] for step in run_to_end(sched)]
        plan = lone_request_chunks(n, hit, checkpoints, max_chunk_tokens=max_chunk, token_budget_per_step=budget,
                                   chunk_alignment=ALIGN)
        assert [(c.start, c.end, c.checkpoints) for c in plan] == handed
        assert plan[-1].is_last and not any(c.is_last for c in plan[:-1])


# ---------------------------------------------------------------- promised chunks (the engine's look-ahead)


def _promise_next(sched: ChunkScheduler, request, count: int) -> list[Chunk]:
    """What the engine promises: the request's next chunks as if it ran alone."""
    from ttprefill.scheduler import lone_request_chunks

    chunks = lone_request_chunks(request.num_tokens, request.scheduled_upto, request.checkpoints,
                                 max_chunk_tokens=sched.max_chunk_tokens,
                                 token_budget_per_step=sched.token_budget_per_step, chunk_alignment=ALIGN,
                                 request_id=request.request_id)[:count]
    sched.promise(request, chunks)
    return chunks


def test_promised_chunks_are_handed_out_as_promised_when_another_request_shares_the_step():
    """A promised its next two chunks; B, admitted meanwhile, shares A's first 32 tokens. Without the promise A
    would be asked for a checkpoint at 32 (the end of its promised [16, 32)) and B would wait for it; with it,
    A's chunks keep their bounds and checkpoints, B computes the prefix itself, and the step budget still goes to
    A first."""
    harness = Harness(max_chunk=16, budget=24)
    a = harness.sched.submit("a", SYSTEM + [1] * 10)
    [(_, first)] = harness.sched.next_step()
    promised = _promise_next(harness.sched, a, 2)
    assert [(c.start, c.end, c.checkpoints) for c in promised] == [(16, 32, ()), (32, 42, (40,))]
    harness.run(a, first)
    harness.sched.submit("b", SYSTEM + [2] * 7)
    step = harness.sched.next_step()
    assert spans(step) == [("a", 16, 32, ()), ("b", 0, 8, ())]  # B gets what A's 16 tokens leave of 24
    assert harness.sched.get("b").state is RequestState.RUNNING and a.checkpoints == [40]
    harness.sched.check_invariants()
    for request, chunk in step:
        harness.run(request, chunk)
    assert spans(harness.sched.next_step())[0] == ("a", 32, 42, (40,))  # the rest of the promise, whole
    assert not a.promised


def test_a_promise_must_follow_the_chunk_handed_out_last_and_cannot_change():
    sched = scheduler(12, 1000, hit=0, checkpoints=[16, 40])
    a = sched.submit("a", range(50))
    sched.next_step()  # [0, 12) in flight
    with pytest.raises(ValueError, match=r"cannot promise chunk \[16, 24\).*starts at 12"):
        sched.promise(a, [Chunk("a", 16, 24, (), False)])
    with pytest.raises(ValueError, match=r"cannot promise chunk \[12, 24\) with checkpoints \[\].*\(\[16\]\)"):
        sched.promise(a, [Chunk("a", 12, 24, (), False)])
    sched.promise(a, [Chunk("a", 12, 24, (16,), False), Chunk("a", 24, 36, (), False)])
    with pytest.raises(ValueError, match=r"promised before \[\(12, 24\), \(24, 36\)\] cannot change"):
        sched.promise(a, [Chunk("a", 12, 20, (16,), False)])
    sched.promise(a, [Chunk("a", 12, 24, (16,), False)])  # a shorter promise withdraws nothing
    assert [(c.start, c.end) for c in a.promised] == [(12, 24), (24, 36)]
    sched.check_invariants()


def test_a_chunk_given_back_is_handed_out_again_as_it_was():
    sched = scheduler(12, 20, hit=0, checkpoints=[16])
    a, b = sched.submit("a", range(30)), sched.submit("b", range(100, 130))
    step = sched.next_step()
    assert spans(step) == [("a", 0, 12, ()), ("b", 0, 8, ())]
    with pytest.raises(ValueError, match=r"chunk \[0, 12\) is not the one in flight"):
        sched.give_back(b, step[0][1])
    sched.chunk_done(a, step[0][1])
    sched.give_back(b, step[1][1])  # not started: b's run stopped before it
    sched.check_invariants()
    assert spans(sched.next_step()) == [("a", 12, 24, (16,)), ("b", 0, 8, ())]
