"""The pipeline split (EngineOptions.parallel "pipeline", model/pipeline_stack.py) on a simulated 1x2 mesh: the
tiny model's logits and states against one chip and fp64 transformers, for a cold request and a prefix-cache hit
(the hit resumes every stage from the checkpoint the stages' parts were merged into); the stages running ahead
on the chunks the engine says come next, and refusing a forward that is not one of them; the memory plan's
stage shares; the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_hf_oracle import TINY, WEIGHTS, against_transformers, tiny_sim_engine, write_tiny_model

from ttprefill.engine import EngineError, EngineOptions
from ttprefill.model.device_stack import DeviceStackError
from ttprefill.model.memory_plan import plan_memory, weight_bytes
from ttprefill.model.pipeline_split import stage_layers
from ttprefill.model.stack import ChunkContext, UpcomingChunk
from ttprefill.reference.metrics import pcc, rel_rms

SHARED, PROMPT, CHUNK = 128, 300, 64  # five chunks: the stages overlap on all but the first and last
# Measured (simulator, these prompts, bfp8 weights), last-token logits against fp64 transformers, rel RMS / PCC:
# one chip 0.0156 / 0.99989 cold, 0.0138 / 0.99991 on the hit; two stages 0.0165 / 0.99987 and 0.0136 / 0.99991.
# The stages differ from one chip only where a stage ends (its last MLP's plain add and the next stage's lone input
# norm, in place of the add fused with the norm): rel RMS 0.008 and 0.007 between their logits. The bounds are
# the K/V-format tests' (test_kv_page_format), about 1.5x the worst.
REL_RMS_BOUND, PCC_BOUND = 0.026, 0.9997


def _prompts() -> tuple[list[int], list[int]]:
    rng = np.random.default_rng(31)
    first = rng.integers(0, TINY.vocab_size, PROMPT).tolist()
    return first, first[:SHARED] + rng.integers(0, TINY.vocab_size, PROMPT - SHARED).tolist()


def _options(parallel: str) -> EngineOptions:
    return EngineOptions(checkpoint_every_blocks=1, chunk_tokens=CHUNK, parallel=parallel)


@pytest.fixture(scope="module")
def runs():
    """Both prompts on one engine each: one chip, and two pipeline stages on a 1x2 mesh."""
    out = {}
    for name, mesh in (("one chip", (1, 1)), ("pipeline", (1, 2))):
        with tiny_sim_engine(WEIGHTS, _options("pipeline"), mesh) as engine:
            out[name] = [engine.prefill(tokens) for tokens in _prompts()]
            out[name + " forwards"] = list(getattr(engine.model, "forwards", []))
    return out


def test_two_stages_match_one_chip_and_transformers_cold_and_on_a_hit(runs):
    for tokens, one, two in zip(_prompts(), runs["one chip"], runs["pipeline"]):
        assert pcc(one.last_logits, two.last_logits) >= 0.999
        err = against_transformers(tokens, two.last_logits, WEIGHTS)
        assert err["rel_rms"] <= REL_RMS_BOUND and err["pcc"] >= PCC_BOUND, err
    assert [r.cached_tokens for r in runs["pipeline"]] == [0, SHARED]


def test_each_layers_state_is_the_stage_that_holds_it(runs):
    """The result's GDN states, merged from both stages: the first stage's layers run exactly what one chip runs
    (bit for bit); the second's start from rows rounded once more where the stages meet."""
    first_stage = stage_layers(TINY.num_layers, 2)[0]
    for one, two in zip(runs["one chip"], runs["pipeline"]):
        assert sorted(two.state.recurrent_states) == sorted(one.state.recurrent_states) == list(TINY.gdn_layers)
        for i in TINY.gdn_layers:
            a, b = one.state.recurrent_states[i].numpy(), two.state.recurrent_states[i].numpy()
            ca, cb = one.state.conv_states[i].numpy(), two.state.conv_states[i].numpy()
            if i in first_stage:
                assert np.array_equal(a, b) and np.array_equal(ca, cb)
            else:
                assert rel_rms(a, b) <= 0.02 and rel_rms(ca, cb) <= 0.02


def test_the_stages_overlap_so_the_modeled_time_beats_one_chip(runs):
    """Deterministic modeled time: each prompt's first forward runs stage 0 and then stage 1 on its first chunk
    (nothing to overlap), the later ones run stage 1 on a chunk beside stage 0 on the next, so they are shorter;
    the prompt as a whole takes less than on one chip."""
    forwards = runs["pipeline forwards"]
    chunks = -(-PROMPT // CHUNK)
    first, later = forwards[0], forwards[1:chunks - 1]
    assert all(f < 0.8 * first for f in later), forwards
    for one, two in zip(runs["one chip"], runs["pipeline"]):
        assert two.modeled_device_s < one.modeled_device_s


def _stack(mesh=(1, 2)):
    from ttprefill.device.mesh import SimMesh
    from ttprefill.engine import make_mixers

    return make_mixers("sim", TINY, 64, _options("pipeline"), SimMesh(mesh), weights=WEIGHTS)


def _chunks(n: int, seed: int = 5) -> list[UpcomingChunk]:
    tokens = np.random.default_rng(seed).integers(0, TINY.vocab_size, n * CHUNK)
    pages = tuple(range(n))
    return [UpcomingChunk(tuple(tokens[c * CHUNK:(c + 1) * CHUNK]), ChunkContext(c * CHUNK, CHUNK, pages),
                          need_logits=c == n - 1) for c in range(n)]


def test_a_stage_holds_at_most_one_run_whose_results_are_not_taken_beside_the_one_it_starts(monkeypatch):
    """Three stages, six chunks forwarded with the look-ahead: a run's results (rows, checkpoint states) stay on
    its chip until the stack takes them, which the memory plan counts as one run a stage (none on the last). At
    every start, the stage's earlier runs not yet finished are counted."""
    from ttprefill.model import device_stack

    stack = _stack((1, 3))
    held = {id(stage): [] for stage in stack.stages}
    most = {id(stage): 0 for stage in stack.stages}
    start = device_stack.DeviceStack.start

    def counting_start(self, *args, **kwargs):
        mine = held[id(self)]
        mine[:] = [s for s in mine if not s.finished]
        most[id(self)] = max(most[id(self)], len(mine))
        started = start(self, *args, **kwargs)
        mine.append(started)
        return started

    monkeypatch.setattr(device_stack.DeviceStack, "start", counting_start)
    chunks = _chunks(6)
    state = stack.new_state()
    try:
        for c, chunk in enumerate(chunks):
            stack.forward(chunk.tokens, state, chunk.context, need_logits=chunk.need_logits,
                          upcoming=tuple(chunks[c + 1:c + 1 + stack.lookahead]))
        assert [most[id(stage)] for stage in stack.stages] == [1, 1, 0]
    finally:
        stack.release(state)
        stack.free()


def test_releasing_a_request_with_runs_ahead_frees_what_they_hold():
    """Stage 0 has run chunk 1 ahead, its rows and states still on its chip: releasing the request drops them."""
    stack = _stack()
    chunk = _chunks(2)
    state = stack.new_state()
    before = stack.device.dram_bytes_in_use()
    try:
        stack.forward(chunk[0].tokens, state, chunk[0].context, need_logits=False, upcoming=(chunk[1],))
        request = stack._requests[id(state)][1]
        assert [list(ran) for ran in request.ran] == [[CHUNK], []]
        assert request.ran[0][CHUNK].started is not None and not request.ran[0][CHUNK].started.finished
    finally:
        stack.release(state)
    assert stack.device.dram_bytes_in_use() == before
    stack.free()


def _end_states_after_each_forward(lookahead: bool, overlap_transfers: bool, n: int = 3) -> list[dict]:
    """The engine state's GDN states after each forward of n chunks that each end on a checkpoint (sync_end)."""
    stack = _stack()
    for stage in stack.stages:
        stage.overlap_transfers = overlap_transfers
    chunks = [UpcomingChunk(c.tokens, c.context, sync_end=True, need_logits=c.need_logits) for c in _chunks(n)]
    state = stack.new_state()
    ends = []
    try:
        for c, chunk in enumerate(chunks):
            upcoming = tuple(chunks[c + 1:c + 1 + stack.lookahead]) if lookahead else ()
            stack.forward(chunk.tokens, state, chunk.context, need_logits=chunk.need_logits, sync_end=True,
                          upcoming=upcoming)
            ends.append({i: (state.conv_states[i].numpy().copy(), state.recurrent_states[i].numpy().copy())
                         for i in TINY.gdn_layers})
    finally:
        stack.release(state)
        stack.free()
    return ends


def test_a_chunks_end_state_is_its_own_when_the_stage_has_started_the_next_chunk():
    """Stage 0 starts chunk c + 1 before stage 1 takes chunk c's rows (which finishes stage 0's run of c): the end
    state collected for c must still be c's, with the checkpoint reads beside the programs and read at once
    (overlap_transfers off, which stored the end state at start, so chunk c + 1's replaced c's). Against the
    same chunks forwarded one at a time (no look-ahead: every run finished before the next starts), bit for bit."""
    one_at_a_time = _end_states_after_each_forward(lookahead=False, overlap_transfers=True)
    for overlap in (True, False):
        ahead = _end_states_after_each_forward(lookahead=True, overlap_transfers=overlap)
        for c, (want, got) in enumerate(zip(one_at_a_time, ahead)):
            for i in TINY.gdn_layers:
                assert np.array_equal(want[i][0], got[i][0]) and np.array_equal(want[i][1], got[i][1]), \
                    (overlap, c, i)


def test_stages_run_ahead_on_the_chunks_given_and_refuse_another():
    stack = _stack()
    chunk = _chunks(3)
    state = stack.new_state()
    before = stack.device.dram_bytes_in_use()
    try:
        stack.forward(chunk[0].tokens, state, chunk[0].context, need_logits=False, upcoming=(chunk[1],))
        request = stack._requests[id(state)][1]
        assert state.num_tokens == CHUNK
        assert [s.num_tokens for s in request.stage_states] == [2 * CHUNK, CHUNK]  # stage 0 one chunk ahead
        other = tuple(reversed(chunk[1].tokens))
        with pytest.raises(DeviceStackError, match="different chunk"):
            stack.forward(other, state, chunk[1].context, need_logits=False)
        assert [s.num_tokens for s in request.stage_states] == [2 * CHUNK, CHUNK]  # nothing ran
        with pytest.raises(DeviceStackError, match="run chunks past"):
            stack.sync_to_host(state)
        stack.forward(chunk[1].tokens, state, chunk[1].context, need_logits=False, upcoming=(chunk[2],))
        logits = stack.forward(chunk[2].tokens, state, chunk[2].context)
        assert logits is not None and state.num_tokens == 3 * CHUNK
    finally:
        stack.release(state)
    assert stack.device.dram_bytes_in_use() == before
    stack.free()


def test_the_chunk_size_not_given_follows_the_split_and_a_given_one_wins():
    """The pipeline pays (stages - 1) chunks to fill and drain, so its default chunk is its own; the default is
    resolved where it is read, so replacing `parallel` on options made without a chunk size moves it too."""
    from dataclasses import replace

    from ttprefill.model.pipeline_split import PIPELINE_CHUNK_TOKENS
    from ttprefill.options import DEFAULT_CHUNK_TOKENS

    assert PIPELINE_CHUNK_TOKENS != DEFAULT_CHUNK_TOKENS
    assert EngineOptions().tokens_per_chunk == DEFAULT_CHUNK_TOKENS
    assert EngineOptions(parallel="pipeline").tokens_per_chunk == PIPELINE_CHUNK_TOKENS
    assert replace(EngineOptions(), parallel="pipeline").tokens_per_chunk == PIPELINE_CHUNK_TOKENS
    assert EngineOptions(parallel="pipeline", chunk_tokens=512).tokens_per_chunk == 512
    assert EngineOptions(parallel="pipeline").step_token_budget == PIPELINE_CHUNK_TOKENS
    with pytest.raises(EngineError, match="chunk_tokens must be a positive integer"):
        EngineOptions(chunk_tokens=0)


def test_pipeline_options_refuse_micro_batches():
    with pytest.raises(EngineError, match="micro_batches=1"):
        EngineOptions(parallel="pipeline", micro_batches=2)
    with pytest.raises(EngineError, match="parallel must be one of"):
        EngineOptions(parallel="sequence")


@pytest.mark.parametrize("model, chips", [("qwen3.5-9b", 2), ("qwen3.5-27b", 8), ("tiny", 3)])
def test_the_stages_weights_add_up_to_the_models(model, chips):
    from ttprefill.model.config import get_preset

    config = get_preset(model)
    stages = stage_layers(config.num_layers, chips)
    assert sum(weight_bytes(config, "bfp8", r) for r in stages) == weight_bytes(config, "bfp8")
    plan = plan_memory(config, weight_format="bfp8", cache_budget_bytes=256 << 20, chunk_tokens=2048, chips=chips,
                       parallel="pipeline")
    held = [weight_bytes(config, "bfp8", r) for r in stages]
    # the plan is the fullest stage's; on the evenly split models the last, which also holds the LM head
    assert plan.parts["weights"] in held
    if config.num_layers % chips == 0:
        assert plan.parts["weights"] == held[-1] == max(held)


def test_prefill_cli_runs_the_pipeline(tmp_path, capsys, monkeypatch, runs):
    """The CLI's pipeline gives the engine's logits, on a mesh it opens without a fabric (no collective runs)."""
    from ttprefill import engine_cli
    from ttprefill.cli import main

    opened, open_device = [], engine_cli.open_device

    def recording_open(backend, **options):
        opened.append(options)
        return open_device(backend, **options)

    monkeypatch.setattr(engine_cli, "open_device", recording_open)
    folder = write_tiny_model(tmp_path)
    tokens = _prompts()[0]
    (tmp_path / "tokens.txt").write_text(" ".join(map(str, tokens)))
    assert main(["prefill", "--model", str(folder), "--tokens", str(tmp_path / "tokens.txt"), "--mesh", "1x2",
                 "--parallel", "pipeline", "--chunk", str(CHUNK), "--checkpoint-every", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parallel"] == "pipeline" and out["stages"] == [[r.start, r.stop] for r in stage_layers(TINY.num_layers, 2)]
    assert np.array_equal(np.asarray(out["last_logits"], np.float32), runs["pipeline"][0].last_logits)
    assert opened == [{"mesh_shape": (1, 2), "topology": "none"}]


@pytest.mark.parametrize("extra, words", [
    (["--scheme", "all_reduce"], "--scheme sets a tensor-parallel split's collectives"),
    (["--collective-dtype", "bfp8"], "--collective-dtype sets a tensor-parallel split's collectives"),
    (["--micro-batches", "2"], "micro_batches 2 hides a tensor-parallel split's collectives"),
    (["--topology", "line"], "--topology line is the fabric a tensor-parallel split's collectives run on"),
    (["--mesh", "1x8"], "8 stages for 4 layers"),
])
def test_prefill_cli_refuses_what_does_not_apply_to_the_pipeline(tmp_path, capsys, extra, words):
    from ttprefill.cli import main

    (tmp_path / "tokens.txt").write_text("1 2 3")
    args = ["prefill", "--model", "tiny", "--tokens", str(tmp_path / "tokens.txt"), "--mesh", "1x2",
            "--parallel", "pipeline", "--json"]
    assert main(args + extra) == 2
    out, err = capsys.readouterr()
    assert words in err and not out


def test_no_look_ahead_while_another_request_is_admitted():
    """Stage 0 may run a chunk ahead only if nothing can change that chunk before it is forwarded. Here B's first
    chunk runs before A's in the same step (A admitted with B, not started yet); A ends in that step, and its
    on_result submits C, which shares B's first 128 tokens, so the scheduler adds a checkpoint at 128 to B (C waits
    for it): B's second chunk now ends in a checkpoint. Had stage 0 run that chunk ahead without it, B's forward
    of it would be refused. The engine looks ahead only while the scheduler runs one request."""
    rng = np.random.default_rng(47)
    b = rng.integers(0, TINY.vocab_size, 5 * CHUNK).tolist()
    a = rng.integers(0, TINY.vocab_size, 40).tolist()
    c = b[:2 * CHUNK] + rng.integers(0, TINY.vocab_size, 100).tolist()
    options = EngineOptions(chunk_tokens=CHUNK, token_budget_per_step=2 * CHUNK, parallel="pipeline")
    with tiny_sim_engine(WEIGHTS, options, (1, 2)) as engine:
        ids = {}

        def submit_c(result):
            if result.request_id == ids["a"]:
                ids["c"] = engine.submit(c)

        ids["b"], ids["a"] = engine.submit(b), engine.submit(a)
        engine.run(on_result=submit_c)
        assert not engine.failures, engine.failures
        assert sorted(engine.results) == sorted(ids.values())
        assert engine.results[ids["c"]].cached_tokens == 2 * CHUNK  # C resumed from B's checkpoint at 128


def test_chunks_run_ahead_stay_as_they_ran_when_a_run_is_interrupted_and_another_request_comes():
    """A runs alone, so stage 0 runs its second chunk [64, 128) ahead; then run() is interrupted (Ctrl-C after the
    first chunk). B, sharing A's first 128 tokens, is submitted before run() goes on: the scheduler would have A
    publish a checkpoint at 128 for B to wait for, which would change the chunk stage 0 already ran. The scheduler
    keeps the chunks the engine promised the device instead (B computes its prefix itself), so both prompts give
    the logits they give alone."""
    rng = np.random.default_rng(53)
    a = rng.integers(0, TINY.vocab_size, 5 * CHUNK).tolist()
    b = a[:2 * CHUNK] + rng.integers(0, TINY.vocab_size, 100).tolist()
    options = EngineOptions(chunk_tokens=CHUNK, parallel="pipeline")  # checkpoints every 4 blocks: none at 128
    with tiny_sim_engine(WEIGHTS, options, (1, 2)) as engine:
        chunk_done, calls = engine.scheduler.chunk_done, []

        def interrupted_after_the_first(*args, **kwargs):
            finished = chunk_done(*args, **kwargs)
            calls.append(args[1])
            if len(calls) == 1:
                raise KeyboardInterrupt
            return finished

        engine.scheduler.chunk_done = interrupted_after_the_first
        ids = {"a": engine.submit(a)}
        with pytest.raises(KeyboardInterrupt):
            engine.run()
        ids["b"] = engine.submit(b)
        engine.run()
        assert not engine.failures, engine.failures
        got = {name: engine.results[rid].last_logits for name, rid in ids.items()}
    for name, tokens in (("a", a), ("b", b)):
        with tiny_sim_engine(WEIGHTS, options, (1, 2)) as alone:
            assert np.array_equal(got[name], alone.prefill(tokens).last_logits), name


def test_each_stage_holds_what_the_memory_plan_counts_for_it():
    """Each stage's device stack against the plan's weights of its layers (the last stage with the LM head and the
    final norm): the plan of the fullest stage is what the engine checks before it loads a pipeline."""
    stack = _stack()
    try:
        held = [stage.weight_bytes for stage in stack.stages]
        assert held == [weight_bytes(TINY, "bfp8", r) for r in stage_layers(TINY.num_layers, 2)]
        assert sum(held) == weight_bytes(TINY, "bfp8")
    finally:
        stack.free()


def test_a_stage_that_fails_to_load_frees_the_stages_loaded_before_it():
    """The last stage alone loads the final norm: without it stage 0 loads and stage 1 fails. The error is the
    missing weight's, and stage 0's weights, pages and tables are freed (the mesh holds nothing after)."""
    from ttprefill.device.mesh import SimMesh
    from ttprefill.engine import make_mixers

    mesh = SimMesh((1, 2))
    weights = {k: v for k, v in WEIGHTS.items() if k != "model.norm.weight"}
    with pytest.raises(KeyError, match="model.norm.weight"):
        make_mixers("sim", TINY, 64, _options("pipeline"), mesh, weights=weights)
    assert mesh.dram_bytes_in_use() == 0


def test_free_frees_every_stage_when_one_fails(monkeypatch):
    """A stage whose free raises (a card's teardown) does not keep the others' weights and pools on their chips;
    the error still comes out."""
    stack = _stack()
    before = [chip.dram_bytes_in_use() for chip in stack.device.chips]
    assert all(b > 0 for b in before)

    def broken():
        raise RuntimeError("stage 0 teardown failed")

    stage0_free = stack.stages[0].free
    monkeypatch.setattr(stack.stages[0], "free", broken)
    with pytest.raises(RuntimeError, match="stage 0 teardown failed"):
        stack.free()
    assert stack.device.chips[1].dram_bytes_in_use() == 0
    stage0_free()
    assert stack.device.chips[0].dram_bytes_in_use() == 0
