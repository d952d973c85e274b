"""Host transfers beside the programs (DeviceStack.overlap_transfers): a chunk's GDN checkpoint reads finished at
its end from tensors the stack holds until then, the next chunk's embeddings uploaded into a second input buffer
while the chunk before runs. Same data as the blocking path (each read right after its block, each upload before
its chunk): logits, every checkpoint the prefix cache stores and the final states bit for bit, cold and from a
prefix hit; and where the reads and uploads now happen, counted at the simulator's calls."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill.engine import Engine, EngineOptions
from ttprefill.model.config import get_preset
from ttprefill.model.device_stack import InputBuffer
from ttprefill.model.weights import random_weights

CONFIG = get_preset("tiny").with_changes(max_position_embeddings=4096)
WEIGHTS = random_weights(CONFIG, seed=5)


def engine(overlap: bool) -> Engine:
    # chunks of 128 tokens, a checkpoint every 64: one inside each chunk and one at its end
    options = EngineOptions(chunk_tokens=128, block_tokens=64, checkpoint_every_blocks=1)
    eng = Engine(CONFIG, WEIGHTS, backend="sim", options=options, model_key="host-overlap")
    eng.model.overlap_transfers = overlap
    return eng


def spy_checkpoints(eng) -> dict[int, dict]:
    stored, chunk_done = {}, eng.scheduler.chunk_done

    def spy(request, chunk, checkpoints=None):
        stored.update({(request.request_id, p): payload for p, (payload, _) in (checkpoints or {}).items()})
        return chunk_done(request, chunk, checkpoints)

    eng.scheduler.chunk_done = spy
    return stored


def run(overlap: bool, prompts):
    eng = engine(overlap)
    stored = spy_checkpoints(eng)
    before = eng.model.device.dram_bytes_in_use()
    results = [eng.prefill(p) for p in prompts]
    return eng, stored, results, before


def test_overlapped_transfers_give_the_blocking_paths_bits_cold_and_cached():
    rng = np.random.default_rng(7)
    first = rng.integers(0, CONFIG.vocab_size, 330).tolist()
    second = first[:200] + rng.integers(0, CONFIG.vocab_size, 150).tolist()  # resumes from the checkpoint at 192
    runs = {overlap: run(overlap, [first, second]) for overlap in (True, False)}
    (eng, stored, results, _), (_, stored_off, results_off, _) = runs[True], runs[False]
    assert results[1].cached_tokens == 192 and results_off[1].cached_tokens == 192
    assert sorted(stored) == sorted(stored_off) and len(stored) == 5 + 2  # 64 .. 320; 256, 320
    for key, payload in stored.items():
        for part in ("conv", "recurrent"):
            for i in CONFIG.gdn_layers:
                assert np.array_equal(payload[part][i], stored_off[key][part][i]), (key, part, i)
                assert np.abs(payload[part][i]).max() > 0
    for got, want in zip(results, results_off):
        assert np.array_equal(got.last_logits, want.last_logits)
        for i in CONFIG.gdn_layers:
            assert np.array_equal(got.state.recurrent_states[i].numpy(), want.state.recurrent_states[i].numpy())
            assert np.array_equal(got.state.conv_states[i].numpy(), want.state.conv_states[i].numpy())
        assert got.chunks == want.chunks
    eng.cache.check_invariants()


def test_checkpoint_reads_finish_after_the_chunks_programs_and_embeddings_go_down_a_chunk_ahead():
    """330 tokens in chunks of 128 (3 chunks). With overlap, every checkpoint read of a chunk happens after the
    chunk's last GDN layer ran (its tensors were held, not freed or rewritten), the 2nd and 3rd chunks' embeddings
    are uploaded into the second input buffer during the chunk before, and nothing stays allocated afterwards."""
    eng = engine(True)
    stack, device = eng.model, eng.model.device
    events = []
    run_program, read_pages, embed = device.run, device.read_pages, stack.split.embed
    device.run = lambda program: (events.append(("run", program.name)), run_program(program))[1]
    device.read_pages = lambda t, first, n: (events.append(("read", t.nbytes)), read_pages(t, first, n))[1]
    stack.split.embed = lambda scratch, rows: (events.append(("embed", type(scratch).__name__, len(rows))),
                                               embed(scratch, rows))[1]
    before = device.dram_bytes_in_use()
    tokens = np.random.default_rng(9).integers(0, CONFIG.vocab_size, 330).tolist()
    try:
        result = eng.prefill(tokens)
    finally:
        del device.run, device.read_pages
        stack.split.embed = embed
    assert result.chunks == 3
    embeds = [e for e in events if e[0] == "embed"]
    assert embeds == [("embed", "Scratch", 128), ("embed", InputBuffer.__name__, 128),
                      ("embed", InputBuffer.__name__, 74)]
    # per chunk: the programs, then (after the last one of its last GDN layer) its checkpoint reads in one run; the
    # last chunk's come after its LM head's programs and the logits row, and the final state sync after them
    n_gdn, reads_per_chunk = len(CONFIG.gdn_layers), 2 * len(CONFIG.gdn_layers)
    kinds = "".join("r" if e[0] == "read" else "p" if e[0] == "run" else "" for e in events)
    bursts = [len(b) for b in kinds.split("p") if b]
    assert bursts == [reads_per_chunk, reads_per_chunk, 1 + reads_per_chunk + 2 * n_gdn], bursts
    assert n_gdn >= 1
    assert device.dram_bytes_in_use() == before  # the held tensors and the input buffers freed


def test_a_prefetch_for_other_tokens_is_dropped_and_the_chunk_uploads_its_own():
    from ttprefill.model.stack import ChunkContext, UpcomingChunk

    stack = engine(True).model
    state = stack.new_state()
    rng = np.random.default_rng(3)
    a, b, guess = (rng.integers(0, CONFIG.vocab_size, 64) for _ in range(3))
    before = stack.device.dram_bytes_in_use()
    try:
        ahead = (UpcomingChunk(tuple(guess), ChunkContext(64, 64, (0, 1))),)
        with_guess = stack.forward(a, state, ChunkContext(0, 64, (0, 1)), upcoming=ahead)
        logits = stack.forward(b, state, ChunkContext(64, 64, (0, 1)))
    finally:
        stack.release(state)
    assert stack.device.dram_bytes_in_use() == before
    ref = engine(False).model
    state = ref.new_state()
    try:
        assert np.array_equal(with_guess, ref.forward(a, state, ChunkContext(0, 64, (0, 1))))
        assert np.array_equal(logits, ref.forward(b, state, ChunkContext(64, 64, (0, 1))))
    finally:
        ref.release(state)


@pytest.mark.parametrize("bad", [[], [-1], [CONFIG.vocab_size]])
def test_no_prefetch_of_nothing_or_of_bad_ids(bad):
    from ttprefill.model.stack import ChunkContext, UpcomingChunk

    stack = engine(True).model
    state = stack.new_state()
    try:
        ahead = (UpcomingChunk(tuple(bad), ChunkContext(32, len(bad), (0,))),)
        stack.forward(np.arange(32), state, ChunkContext(0, 32, (0,)), need_logits=False, upcoming=ahead)
        assert not stack._prefetched
    finally:
        stack.release(state)


def _live_bytes(device):
    """A counter of the tensor bytes live on `device` (allocator rounding aside), by wrapping allocate and free."""
    live, allocate, free = [0], device.allocate, device.free

    def counting_allocate(*args, **kw):
        t = allocate(*args, **kw)
        live[0] += t.nbytes
        return t

    def counting_free(t):
        live[0] -= t.nbytes
        free(t)

    device.allocate, device.free = counting_allocate, counting_free
    return live


def test_the_memory_plan_counts_what_the_stack_holds(monkeypatch):
    """The plan's parts against the tensor bytes the device stack allocates on the simulator: a request's GDN states
    (the ping-pong pair of every GDN layer), and at a chunk's end, beyond what the blocking path holds, every GDN
    layer's checkpoint tensors and the next chunk's input buffer (a 128-token chunk with checkpoints at 64 and 128,
    the next chunk of 128)."""
    from ttprefill.model import device_stack
    from ttprefill.model.memory_plan import checkpoint_read_bytes, input_buffer_bytes, state_bytes

    tokens = np.random.default_rng(4).integers(0, CONFIG.vocab_size, 256).tolist()
    at_wait = {}
    for overlap in (True, False):
        eng = engine(overlap)
        live = _live_bytes(eng.model.device)
        state = eng.model.new_state()
        before = live[0]
        eng.model._device_state(state)
        assert live[0] - before == state_bytes(CONFIG)
        eng.model.release(state)
        seen = at_wait[overlap] = []
        wait = device_stack.PendingReads.wait
        monkeypatch.setattr(device_stack.PendingReads, "wait", lambda self, seen=seen, live=live, wait=wait: (
            seen.append(live[0]), wait(self))[1])
        eng.prefill(tokens)
        monkeypatch.undo()
    extra = at_wait[True][0] - at_wait[False][0]
    assert extra == checkpoint_read_bytes(CONFIG, 128, 64, 64) + input_buffer_bytes(CONFIG, 128)
