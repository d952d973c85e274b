"""EngineOptions.micro_batches: the device stack runs a chunk as halves A and B interleaved block by block
(model/micro_batches.py). Oracles: the same stack run with chunks of the halves' sizes (the same programs on the
same values, so bit for bit on the simulator: logits, every checkpoint the prefix cache stores, the final GDN
states, the collectives a mesh ran), and the fp64 reference stack. The split rule is checked against values worked
out by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_hf_oracle import TINY, WEIGHTS

from ttprefill import cli
from ttprefill.device.mesh import SimMesh
from ttprefill.engine import Engine, EngineError, EngineOptions
from ttprefill.model.micro_batches import micro_batch_bounds
from ttprefill.model.reference_model import ReferenceModel
from ttprefill.model.stack import ChunkContext
from ttprefill.reference.metrics import pcc, rel_rms

RS = "reduce_scatter"


@pytest.mark.parametrize("tokens, micro, gdn_chunk, want", [
    (2048, 2, 64, [(0, 1024), (1024, 1024)]),
    (2048, 1, 64, [(0, 2048)]),
    (128, 2, 64, [(0, 64), (64, 64)]),
    (200, 2, 64, [(0, 64), (64, 136)]),   # half is 100: one whole GDN chunk for A, B the rest
    (127, 2, 64, [(0, 127)]),             # half is 63: less than a GDN chunk, the chunk runs whole
    (100, 2, 16, [(0, 32), (32, 68)]),    # GDN chunks of 16: A in whole tile rows (32), the attention's unit
    (40, 2, 16, [(0, 40)]),
])
def test_the_split_by_hand(tokens, micro, gdn_chunk, want):
    assert micro_batch_bounds(tokens, micro, gdn_chunk) == want


@pytest.mark.parametrize("bad", [0, 3, True, 2.0, "2"])
def test_a_micro_batch_count_other_than_1_or_2_is_refused_naming_the_choices(bad):
    with pytest.raises(EngineError, match=r"micro_batches must be one of 1, 2"):
        EngineOptions(micro_batches=bad)


def _engine(micro: int, chunk: int, device=None, scheme: str = RS) -> Engine:
    # a checkpoint at every 64-token block: one at A's end inside each chunk of 128, one at its end
    options = EngineOptions(chunk_tokens=chunk, block_tokens=64, checkpoint_every_blocks=1, tp_scheme=scheme,
                            micro_batches=micro)
    return Engine(TINY, WEIGHTS, backend="sim", options=options, device=device, model_key="micro-batches")


def _stored_checkpoints(eng) -> dict[int, dict]:
    stored, chunk_done = {}, eng.scheduler.chunk_done

    def spy(request, chunk, checkpoints=None):
        stored.update({p: payload for p, (payload, _) in (checkpoints or {}).items()})
        return chunk_done(request, chunk, checkpoints)

    eng.scheduler.chunk_done = spy
    return stored


def test_two_micro_batches_on_a_mesh_equal_chunks_of_half_the_size_bit_for_bit():
    """1x2 under reduce_scatter (each half split over the chips by rows as a chunk is): chunks of 128 as two halves
    against chunks of 64. 300 tokens: 128, 128 and a last chunk of 44 that runs whole (too short to split) in both."""
    tokens = np.random.default_rng(11).integers(0, TINY.vocab_size, 300).tolist()
    runs = {}
    for micro, chunk in ((2, 128), (1, 64)):
        eng = _engine(micro, chunk, SimMesh((1, 2)))
        stored = _stored_checkpoints(eng)
        runs[micro] = (eng, stored, eng.prefill(tokens))
    (eng2, stored2, r2), (eng1, stored1, r1) = runs[2], runs[1]
    assert r2.chunks == 3 and r1.chunks == 5
    assert np.array_equal(r2.last_logits, r1.last_logits)
    for i in TINY.gdn_layers:
        assert torch.equal(r2.state.recurrent_states[i], r1.state.recurrent_states[i])
        assert torch.equal(r2.state.conv_states[i], r1.state.conv_states[i])
    assert sorted(stored2) == sorted(stored1) == [64, 128, 192, 256]  # block ends (300 is inside a block)
    for p in stored1:
        for part in ("conv", "recurrent"):
            for i in TINY.gdn_layers:
                assert np.array_equal(stored2[p][part][i], stored1[p][part][i]), (p, part, i)
    # the same collectives on the same shapes: per half and layer a gather and a scatter a block
    c2, c1 = eng2.model.collectives, eng1.model.collectives
    assert c2.count == c1.count and c2.bytes_per_chip == c1.bytes_per_chip
    assert c2.count["reduce_scatter"] == 2 * TINY.num_layers * (2 + 2 + 1)
    assert r2.host_bytes_down == r1.host_bytes_down and r2.host_bytes_up == r1.host_bytes_up
    # and the model's answer: the fp64 reference stack
    ref = ReferenceModel(TINY, WEIGHTS, dtype=torch.float64, gdn_chunk=64)
    want = ref.forward(tokens, ref.new_state(), 0, last_only=True).numpy()
    assert pcc(want, r2.last_logits) >= 0.999 and rel_rms(want, r2.last_logits) <= 0.03


@pytest.mark.parametrize("mesh, scheme", [((1, 1), RS), ((1, 2), "all_reduce")])
def test_a_ragged_chunk_split_in_two_equals_two_forwards(mesh, scheme):
    """A chunk of 200 tokens splits 64 + 136 (B ragged); its checkpoint at 64 is A's end state, the one at 128 lies
    inside B, the one at 200 is the chunk's end. Against the stack run on the two pieces as chunks of their own."""
    rng = np.random.default_rng(5)
    tokens = rng.integers(0, TINY.vocab_size, 200)
    pages = tuple(range(4))
    got = {}
    for micro in (2, 1):
        eng = _engine(micro, 256, SimMesh(mesh) if mesh != (1, 1) else None, scheme)
        stack = eng.model
        state = stack.new_state()
        before = stack.device.dram_bytes_in_use()
        try:
            if micro == 2:
                logits = stack.forward(tokens, state, ChunkContext(0, 200, pages, checkpoints=(64, 128)),
                                       sync_end=True)
                states = {p: state.checkpoints[p] for p in (64, 128)}
            else:
                stack.forward(tokens[:64], state, ChunkContext(0, 64, pages), need_logits=False, sync_end=True)
                at_64 = {i: (state.conv_states[i].clone(), state.recurrent_states[i].clone())
                         for i in TINY.gdn_layers}
                logits = stack.forward(tokens[64:], state, ChunkContext(64, 136, pages, checkpoints=(128,)),
                                       sync_end=True)
                states = {64: at_64, 128: state.checkpoints[128]}
            states[200] = state
            got[micro] = (logits, {p: {i: _state_of(s, i) for i in TINY.gdn_layers} for p, s in states.items()})
        finally:
            stack.release(state)
        assert stack.device.dram_bytes_in_use() == before
    assert np.array_equal(got[2][0], got[1][0])
    for p in (64, 128, 200):
        for i in TINY.gdn_layers:
            for a, b in zip(got[2][1][p][i], got[1][1][p][i]):
                assert torch.equal(a, b), (p, i)
                assert a.abs().max() > 0


def _state_of(s, layer):
    if isinstance(s, dict):
        return s[layer]
    return s.conv_states[layer].clone(), s.recurrent_states[layer].clone()


def test_prefill_cli_takes_micro_batches(tmp_path, capsys):
    tokens = np.random.default_rng(2).integers(0, TINY.vocab_size, 128)
    (tmp_path / "tokens.txt").write_text(" ".join(map(str, tokens)))
    out = {}
    for micro in ("1", "2"):
        code = cli.main(["prefill", "--json", "--backend", "sim", "--tokens", str(tmp_path / "tokens.txt"),
                         "--chunk", "128", "--micro-batches", micro])
        stdout, err = capsys.readouterr()
        assert code == 0, err
        out[micro] = json.loads(stdout.strip().splitlines()[-1])
    # the same model answer within bf16 (two halves are two chunks' programs, not one chunk's)
    a, b = (np.asarray(out[m]["last_logits"]) for m in ("1", "2"))
    assert pcc(a, b) >= 0.999
    code = cli.main(["prefill", "--backend", "sim", "--tokens", str(tmp_path / "tokens.txt"), "--micro-batches", "3"])
    _, err = capsys.readouterr()
    assert code == 2 and "--micro-batches" in err


def test_each_collective_is_followed_by_the_other_micro_batchs_programs_on_the_compute_grid():
    """The issue order a card's in-order queue needs for the overlap: every collective one half issues is followed
    by the other half's programs (not by its own consumer, which would stall the queue until the collective is
    done), but for A's first gather (A's head start) and B's last reduce-scatter (A has finished). On a mesh the
    programs stay off the collectives' cores: one link's 2 directions x (4 workers + 1 mux) = 10 cores at the grid's
    end leave 54 cores, 8 x 6 whole rows for the programs that need a rectangle."""
    import threading

    from ttprefill.hw import compute_cores, compute_grid

    eng = _engine(2, 128, SimMesh((1, 2)))
    mesh, events = eng.model.device, []
    run, gather, scatter = mesh.run, mesh.all_gather, mesh.reduce_scatter

    def who():
        return threading.current_thread().name

    def spy_run(program):
        events.append((who(), "program", (compute_grid(), compute_cores())))
        return run(program)

    mesh.run = spy_run
    mesh.all_gather = lambda *a, **k: (events.append((who(), "all_gather", 0)), gather(*a, **k))[1]
    mesh.reduce_scatter = lambda *a, **k: (events.append((who(), "reduce_scatter", 0)), scatter(*a, **k))[1]
    tokens = np.random.default_rng(4).integers(0, TINY.vocab_size, 128).tolist()
    try:
        eng.prefill(tokens)
    finally:
        del mesh.run, mesh.all_gather, mesh.reduce_scatter
    inside = [e for e in events if e[0].startswith("micro-batch-")]
    a, b = "micro-batch-0", "micro-batch-1"
    L = TINY.num_layers
    assert sum(e[1] == "reduce_scatter" for e in inside) == 2 * 2 * L  # two blocks a layer, each half
    collectives = [k for k, e in enumerate(inside) if e[1] != "program"]
    first_gather_of_a = next(k for k in collectives if inside[k][0] == a)
    last_scatter_of_b = max(k for k in collectives if inside[k][0] == b)
    for k in collectives:
        if k in (first_gather_of_a, last_scatter_of_b):
            continue
        nxt = inside[k + 1]
        assert nxt[0] != inside[k][0] and nxt[1] == "program", (k, inside[k], nxt)
    # what the planners lay every program of the chunk out on, the LM head's too (a card's sub-devices hold the
    # chip while the engine runs; tiny's programs use fewer cores than either grid holds)
    assert {e[2] for e in events if e[1] == "program"} == {((8, 6), 54)}
    assert len(inside) < len(events)


@pytest.mark.parametrize("mesh_shape, scheme", [((1, 2), RS), ((1, 1), RS)])
def test_the_memory_plan_of_a_whole_chunk_bounds_the_micro_batches_working_set(mesh_shape, scheme):
    """Halves interleaved hold both halves' residual rows and at most two half blocks' temporaries at once, which
    the plan's whole-chunk working set bounds (measured by each chip's live-tensor high-water mark)."""
    from ttprefill.model.device_stack import DeviceStack
    from ttprefill.model.memory_plan import plan_memory

    o, tokens, page_tokens = EngineOptions(), 512, 256
    measured = {}
    for micro in (1, 2):
        mesh = SimMesh(mesh_shape, timing_only=True)
        stack = DeviceStack(TINY, WEIGHTS, mesh, num_pages=2, page_tokens=page_tokens, weight_format="bfp8",
                            gdn_chunk=o.gdn_chunk, gdn_fidelity=o.gdn_fidelity, attention_fidelity=o.attention_fidelity,
                            page_format=o.kv_page_format, tp_scheme=scheme, micro_batches=micro)
        try:
            for chip in mesh.chips:
                chip.reset_tensor_bytes_high_water()
            stack.forward(np.arange(tokens) % TINY.vocab_size, stack.new_state(),
                          ChunkContext(0, tokens, (0, 1), checkpoints=(256,)), need_logits=False, sync_end=True)
            measured[micro] = max(chip.tensor_bytes_high_water() - chip.tensor_bytes_in_use() for chip in mesh.chips)
        finally:
            stack.free()
    parts = plan_memory(TINY, weight_format="bfp8", cache_budget_bytes=0, chunk_tokens=tokens,
                        chips=mesh_shape[0] * mesh_shape[1], gdn_chunk=o.gdn_chunk, block_tokens=page_tokens,
                        mesh_shape=mesh_shape, scheme=scheme).parts
    planned = parts["activations"] + parts["checkpoint_reads"]
    assert measured[1] <= planned and measured[2] <= planned, (measured, planned)
    assert measured[2] < measured[1]


def test_the_analytic_listing_lists_each_chunk_as_its_micro_batches():
    """per_chip_ops with micro_batches 2: 9B over two chips, 5000 tokens in chunks of 2048: halves of 1024 (worked
    out by hand: 2048 / 2 is 16 GDN chunks of 64), and the last chunk's 904 as 448 (452 rounded down to whole GDN
    chunks) + 456. Each half's ops and collectives are a chunk's of its size at its start."""
    from ttprefill.model.config import get_preset
    from ttprefill.model.tensor_parallel import per_chip_ops

    cfg = get_preset("qwen3.5-9b")
    micro = per_chip_ops(cfg, 2, 5000, 2048, micro_batches=2)
    assert [(c["start"], c["tokens"], c["micro_batch"], c["chunk_start"]) for c in micro["chunks"]] == [
        (0, 1024, 0, 0), (1024, 1024, 1, 0), (2048, 1024, 0, 2048), (3072, 1024, 1, 2048),
        (4096, 448, 0, 4096), (4544, 456, 1, 4096)]
    halves = per_chip_ops(cfg, 2, 4096, 1024)  # the first two chunks' halves as chunks of their own
    for got, want in zip(micro["chunks"][:4], halves["chunks"]):
        assert got["layers"] == want["layers"]
    assert micro["micro_batches"] == 2 and per_chip_ops(cfg, 2, 5000, 2048)["micro_batches"] == 1


def test_the_interleaver_alternates_after_the_first_streams_head_start_and_stops_on_an_error():
    from ttprefill.model.interleave import Interleaver

    il, log = Interleaver(head_start=1), []

    def body(name, pieces, fail_at=None):
        def run():
            for k in range(pieces):
                log.append(f"{name}{k}")
                if k == fail_at:
                    raise RuntimeError(f"{name} failed")
                il.pause()
        return run

    il.run([body("A", 4), body("B", 4)])
    assert log == ["A0", "A1", "B0", "A2", "B1", "A3", "B2", "B3"]  # A one piece ahead; B ends alone
    log.clear()
    with pytest.raises(RuntimeError, match="B failed"):
        il.run([body("A", 5), body("B", 4, fail_at=1)])
    assert log == ["A0", "A1", "B0", "A2", "B1"]  # A stopped at its next pause
    log.clear()
    with pytest.raises(RuntimeError, match="A failed"):
        il.run([body("A", 4, fail_at=0), body("B", 4)])
    assert log == ["A0"]  # A failed within its head start: B never starts
    log.clear()
    il.pause()  # outside run: nothing to hand over
    il.run([body("A", 3)])
    assert log == ["A0", "A1", "A2"]


def test_an_interrupted_run_unwinds_every_stream_and_leaves_none_blocked():
    """Ctrl-C lands in run()'s wait (the main thread's): run re-raises it only once the stream issuing has reached
    its next pause and every other has unwound, so nothing keeps issuing work or waits forever behind it, and the
    interleaver runs again afterwards."""
    import threading

    from ttprefill.model.interleave import Interleaver

    il, log = Interleaver(head_start=1), []
    a_issuing = threading.Event()

    def body(name, pieces):
        def run():
            for k in range(pieces):
                log.append(f"{name}{k}")
                if name == "A" and k == 2:
                    a_issuing.set()
                    while not il._cancelled:  # A is still issuing its third piece when the interrupt comes
                        threading.Event().wait(0.001)
                il.pause()
        return run

    class InterruptedWait(threading.Event):
        def wait(self, timeout=None):
            a_issuing.wait()
            raise KeyboardInterrupt

    il._finished = InterruptedWait()
    with pytest.raises(KeyboardInterrupt):
        il.run([body("A", 6), body("B", 6)])
    assert log == ["A0", "A1", "B0", "A2"]  # A stopped at the pause after its piece; B never resumed
    assert not [t for t in threading.enumerate() if t.name.startswith("micro-batch-")]
    log.clear()
    il._finished = threading.Event()
    il.run([body("A", 2), body("B", 2)])
    assert log == ["A0", "A1", "B0", "B1"]


def test_an_interrupt_while_the_streams_start_leaves_no_thread_waiting(monkeypatch):
    """Ctrl-C between starting the first stream's thread and the second's: the started one is woken and ends
    without running its body, and run re-raises."""
    import threading

    from ttprefill.model import interleave

    starts = []

    class InterruptedSecondStart(threading.Thread):
        def start(self):
            starts.append(self.name)
            if len(starts) == 2:
                raise KeyboardInterrupt
            super().start()

    il, log = interleave.Interleaver(head_start=1), []
    monkeypatch.setattr(interleave.threading, "Thread", InterruptedSecondStart)
    with pytest.raises(KeyboardInterrupt):
        il.run([lambda: log.append("A"), lambda: log.append("B")])
    monkeypatch.undo()
    assert starts == ["micro-batch-0", "micro-batch-1"] and log == []
    assert not [t for t in threading.enumerate() if t.name.startswith("micro-batch-")]
    il.run([lambda: log.append("A"), lambda: log.append("B")])
    assert log == ["A", "B"]
