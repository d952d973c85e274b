"""`ttprefill prefill --mesh 1x2 --parallel pipeline --backend tt` on ttnn's mock n300: the tiny model in two pipeline
stages, stage k's layers on chip k as a one-chip device stack over TTDevice.stage_devices()'s one-chip submesh
(behind card_bridge.py, which hands the stage devices back as devices of their own), the residual rows handed from
stage 0 to stage 1 through the host, a prompt of three chunks so that stage 0 runs a chunk ahead.

The same prompt runs on the simulator's SimMesh side by side (prefill_driver.py records both; timing only). The mock
executes no kernel and its reads give zeros, so the checks are what the host path did: every program dispatched, in
order, and on which chip (ttnn's device id of the stage's submesh against the simulated chip's index); which tensors
each stage holds; what every read brought back; closing. Each against the simulator's run and, where the tiny
config gives it, against figures derived here by hand. Values are checked on the simulator
(tests/test_pipeline_stack.py).
"""

from __future__ import annotations

import os
import re
from collections import Counter

import numpy as np
import pytest
from test_mock_prefill import BLOCK, PAGE_VALUES, TILE, _start
from test_mock_prefill_reduce_scatter import _mock_env, _wait

# The tiny preset's figures, written out (ttprefill's config is not read): 4 layers, attention at layer 3, the rest
# Gated DeltaNet; 2 q/k and 4 v GDN heads, 4 q and 2 kv attention heads, every head 64 wide.
HIDDEN, FFN, VOCAB, HEAD_DIM = 256, 512, 1024, 64
GDN_QK, GDN_V, ATTN_Q, ATTN_KV = 2, 4, 4, 2
ATTENTION_LAYERS = (3,)
CONV_ROWS = 3  # the GDN conv state: the conv kernel's 4 taps - 1 rows
# Two stages of tiny's four layers, as equal as they can be: layers 0-1 on chip 0, 2-3 (and the LM head) on chip 1.
STAGES = ((0, 1), (2, 3))
TOKENS, CHUNK_TOKENS = 150, 64
CHUNKS = (64, 64, 22)  # --chunk 64 cuts 150 tokens into these
# GDN checkpoints: every 4 blocks of 64 (EngineOptions.checkpoint_every_blocks: 256, past the prompt) and at the
# prompt's last block boundary, 128: the second chunk's end.
CHECKPOINTS = (128,)
LOOKAHEAD = len(STAGES) - 1  # stage 0 runs up to one chunk ahead of the chunk forwarded


def _gdn_layers(stage: int) -> list[int]:
    return [i for i in STAGES[stage] if i not in ATTENTION_LAYERS]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("mock-pipeline-n300")
    tokens = work / "tokens.txt"
    tokens.write_text(" ".join(map(str, np.random.default_rng(8).integers(0, VOCAB, TOKENS))))
    mock = _mock_env(work, "n300")
    plain = dict(os.environ, PYTHONPATH=mock["PYTHONPATH"])  # the simulator's run: no mock, no ttnn
    # no --scheme and no --topology (a pipeline runs no collective and refuses both), then the split
    procs = {backend: _start([backend, "1x2", "tiny", str(tokens), str(CHUNK_TOKENS), str(work / f"{backend}.json"),
                              "none", "-", "--parallel", "pipeline"], environ, work / f"{backend}.log")
             for backend, environ in (("tt", mock), ("sim", plain))}
    out = _wait(work, procs)
    for backend in out:
        assert out[backend]["exit_code"] == 0, out[backend]["stderr"]
    print(f"\nmock n300 pipeline prefill: {out['tt']['wall_s']:.1f} s on the card path, "
          f"{out['sim']['wall_s']:.1f} s on the simulator")
    return out


def _issue_order() -> list[tuple[int, int]]:
    """(stage, chunk) of every stage run, in the order the host issues them: forward(c) runs stage 0 on every chunk
    up to c + LOOKAHEAD it has not run yet (its input, the tokens, at hand), then stage 1 on chunk c (fed with
    the rows stage 0 handed on)."""
    order, ahead = [], 0
    for c in range(len(CHUNKS)):
        while ahead <= min(c + LOOKAHEAD, len(CHUNKS) - 1):
            order.append((0, ahead))
            ahead += 1
        order.append((1, c))
    return order


def _not_closing(report) -> list:
    return [e for e in report["events"] if e[0] != "close"]


def test_the_prompt_runs_to_the_end_in_two_stages_on_the_mock_card_path(runs):
    r = runs["tt"]["result"]
    assert r["backend"] == "tt" and r["mesh"] == [1, 2] and r["parallel"] == "pipeline"
    assert r["tokens"] == TOKENS and r["chunks"] == len(CHUNKS)
    assert r["stages"] == [[s[0], s[-1] + 1] for s in STAGES]
    assert len(r["last_logits"]) == VOCAB and not any(r["last_logits"])  # the mock ran it: reads give zeros
    assert r["collectives"] == {"modeled": False, "count": {}, "bytes_per_chip": 0}  # rows go through the host
    assert not [e for e in runs["tt"]["events"] if e[0] == "collective"]


def test_the_card_path_dispatches_and_reads_what_the_simulator_does_in_order_on_the_same_chips(runs):
    tt, sim = _not_closing(runs["tt"]), _not_closing(runs["sim"])
    assert len(tt) > 0 and tt == sim  # programs and reads interleaved, each with its chip
    # every dispatch and read is on a stage device (one chip), none on the mesh the CLI opened
    assert all(e[-1] in (0, 1) for e in tt) and {e[-1] for e in tt} == {0, 1}


def test_each_stage_runs_its_layers_and_stage_0_runs_a_chunk_ahead(runs):
    programs = [(e[2], e[3]) for e in _not_closing(runs["tt"]) if e[0] == "program"]  # (label, chip)
    scans = [(chip, int(re.search(r"_T(\d+)_", label).group(1))) for label, chip in programs
             if label.startswith("gdn_scan")]
    attention = Counter(chip for label, chip in programs if label.startswith("flash_attention"))
    # one GDN scan per GDN layer of the stage and chunk; attention (layer 3) on chip 1 only, once per chunk
    assert Counter(chip for chip, _ in scans) == {k: len(_gdn_layers(k)) * len(CHUNKS) for k in range(len(STAGES))}
    assert attention == {1: len(CHUNKS)}
    # the stage runs, in order (each a stage's GDN scans of one chunk, one per layer): stage 0 runs chunk 1 before
    # stage 1 runs chunk 0
    runs_seen, i = [], 0
    while i < len(scans):
        chip, tokens = scans[i]
        n = len(_gdn_layers(chip))
        assert scans[i:i + n] == [(chip, tokens)] * n, scans
        runs_seen.append((chip, tokens))
        i += n
    assert runs_seen == [(k, CHUNKS[c]) for k, c in _issue_order()]
    # the LM head ([hidden] x vocab, its logits row extracted) on the last stage only, once: the last chunk
    head = [chip for label, chip in programs if label.startswith(f"linear_k{HIDDEN}_n{VOCAB}_")]
    assert head == [1]


def test_the_host_waits_for_a_stage_only_with_its_next_run_queued(runs):
    """What makes the stages overlap on a card with one host thread: the host reads stage 0's rows of chunk c (a
    wait for chip 0) only after it has issued stage 0's run of chunk c + 1, so chip 0 works on c + 1 while the
    host hands c on to chip 1. Stage 0's runs are told apart by their GDN scans (one per GDN layer each)."""
    events = _not_closing(runs["tt"])
    scans = [i for i, e in enumerate(events) if e[0] == "program" and e[2].startswith("gdn_scan") and e[3] == 0]
    per_run = len(_gdn_layers(0))
    run_starts = scans[::per_run]
    row_reads = [i for i, e in enumerate(events)
                 if e[0] == "read" and e[1] == "download" and e[-1] == 0 and e[2] == [e[2][0], HIDDEN]]
    assert len(run_starts) == len(row_reads) == len(CHUNKS)
    for c in range(len(CHUNKS) - 1):
        assert run_starts[c + 1] < row_reads[c], (c, run_starts, row_reads)


def _stage_weights(stage: int) -> Counter:
    """The resident weights of a stage whose shape the model fixes (k_in x n_out), counted (as test_mock_prefill's,
    whole heads on one chip): per GDN layer in_proj_qkv, out_proj and the conv taps; per attention layer the fused
    q|k|v projection and o_proj; per layer the MLP's gate|up and down; the last stage the LM head."""
    conv = 2 * GDN_QK * HEAD_DIM + GDN_V * HEAD_DIM
    out = Counter()
    for layer in STAGES[stage]:
        if layer in ATTENTION_LAYERS:
            out.update([(HIDDEN, ATTN_Q * 2 * HEAD_DIM + 2 * ATTN_KV * HEAD_DIM), (ATTN_Q * HEAD_DIM, HIDDEN)])
        else:
            out.update([(HIDDEN, conv), (GDN_V * HEAD_DIM, HIDDEN), (4 * TILE, conv)])
        out.update([(HIDDEN, 2 * FFN), (FFN, HIDDEN)])
    if stage == len(STAGES) - 1:
        out.update([(HIDDEN, VOCAB)])
    return out


def test_each_stage_holds_its_layers_only_on_its_own_chip(runs):
    tt, sim = runs["tt"]["stacks"], runs["sim"]["stacks"]
    assert tt == sim
    assert [s["chip"] for s in tt] == list(range(len(STAGES)))  # one one-chip device stack per stage, row-major
    for stage, stack in enumerate(tt):
        assert all(len(shapes) == 1 for shapes in stack["held"])  # every tensor on one chip
        shapes = [tuple(s[0]) for s in stack["held"]]
        pools = [s for s in shapes if len(s) == 4]
        held = Counter(s for s in shapes if len(s) == 2)
        expected = _stage_weights(stage)
        # as often as the stage's layers need them: stage 0 none of layer 2's or 3's nor the LM head (whose shape
        # is gate|up's in tiny: counted)
        assert {s: held[s] for s in expected} == dict(expected)
        attention = [i for i in STAGES[stage] if i in ATTENTION_LAYERS]
        assert len(pools) == 2 * len(attention)  # the K and V pages of the stage's attention layers
        assert all(p[1:] == (ATTN_KV, BLOCK, HEAD_DIM) for p in pools)


def _expected_reads() -> list:
    """Every read, in order, with its chip. A stage run's reads are taken when the stack finishes it: stage 0's
    run of chunk c just before stage 1's run of c starts (which needs its rows), stage 1's run as its forward
    ends. A finish reads the GDN checkpoint states of the stage's layers (conv rows in row-major bf16 pages, the
    recurrent state in fp32 tiles) when the chunk ends on a checkpoint, then on stage 0 the rows for stage 1
    ([T, hidden]). Stage 1's run of the last chunk reads the logits row as it runs. At the end the prompt's end
    state (not a checkpoint) comes up whole, stage by stage."""
    conv = 2 * GDN_QK * HEAD_DIM + GDN_V * HEAD_DIM
    rec = [GDN_V * HEAD_DIM, HEAD_DIM]
    pages = CONV_ROWS * -(-conv // PAGE_VALUES)
    rec_tiles = -(-rec[0] // TILE) * -(-rec[1] // TILE)
    ends = np.cumsum(CHUNKS).tolist()
    expected = []

    def finish(stage: int, c: int) -> None:
        if ends[c] in CHECKPOINTS:
            for _ in _gdn_layers(stage):
                expected.append(["read", "read_pages", [TILE, TILE * pages], [0, pages], [pages * 2048], stage])
                expected.append(["read", "read_pages", rec, [0, rec_tiles], [rec_tiles * 4096], stage])
        if stage == 0:
            expected.append(["read", "download", [CHUNKS[c], HIDDEN], [], [CHUNKS[c], HIDDEN], stage])

    for stage, c in _issue_order():
        if stage == 1:  # the last run of its forward: stage 0's run of c finished before it, it after
            finish(0, c)
            if c == len(CHUNKS) - 1:
                width = -(-VOCAB // PAGE_VALUES)
                expected.append(["read", "read_pages", [TILE, TILE * width], [0, width], [width * 2048], stage])
            finish(1, c)
    for stage in range(len(STAGES)):
        for _ in _gdn_layers(stage):
            expected.append(["read", "download", [CONV_ROWS, conv], [], [CONV_ROWS, conv], stage])
            expected.append(["read", "download", rec, [], rec, stage])
    return expected


def test_the_reads_are_the_hand_offs_the_checkpoints_and_the_logits_row(runs):
    reads = [e for e in _not_closing(runs["tt"]) if e[0] == "read"]
    assert reads == _expected_reads()


def test_closing_the_mesh_closes_both_stages(runs):
    """The CLI closes the mesh it opened (without a fabric: no collective runs, so ttnn's fabric stays disabled),
    and that closes the stage devices first."""
    assert [e for e in runs["tt"]["events"] if e[0] == "close"] == [
        ["close", {"fabric_when_open": "FabricConfig.DISABLED", "mesh_open": False,
                   "stage_meshes_open": [False, False], "fabric_after_close": "FabricConfig.DISABLED"}]]
    assert runs["tt"]["events"][-1][0] == "close"
