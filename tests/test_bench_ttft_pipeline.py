"""`ttprefill bench ttft --parallel pipeline`: the pipeline split's modeled TTFT against figures of the one-chip
bench of the same prompt (the tiny model, 700 tokens in chunks of 128: six chunks, timing only, modeled)."""

from __future__ import annotations

import json

import pytest

from ttprefill import cli
from ttprefill.device.host_link import call_seconds, pcie_bytes_per_s
from ttprefill.device.mesh_timing import MESH_TIMING_VERSION
from ttprefill.model.config import get_preset

SEQ, CHUNK = 700, 128
ARGS = ["bench", "ttft", "--model", "tiny", "--seq", str(SEQ), "--chunk", str(CHUNK), "--timing-only", "--json"]


@pytest.fixture(scope="module")
def runs():
    """The one-chip bench, the pipeline bench on one stage and on two, and the one chip's parts per chunk."""
    import contextlib
    import io
    from dataclasses import replace

    from ttprefill.bench.ttft_parts import ChunkSimulator
    from ttprefill.options import EngineOptions

    out = {}
    for name, extra in (("one", []), ("one_stage", ["--parallel", "pipeline"]),
                        ("two_stages", ["--parallel", "pipeline", "--mesh", "1x2"])):
        printed = io.StringIO()  # capsys is a test's, not a module fixture's
        with contextlib.redirect_stdout(printed):
            assert cli.main(ARGS + extra) == 0
        out[name] = json.loads(printed.getvalue())
    o = replace(EngineOptions(), chunk_tokens=CHUNK)
    sim = ChunkSimulator(get_preset("tiny"), o, SEQ, "central")
    out["parts"] = [sim.chunk(c) for c in sim.plan]
    out["head"] = sim.head(out["parts"][-1].tokens)
    return out


def _down_seconds(nbytes: int) -> float:
    """One bf16 tile-page upload on a chip's own PCIe link, from the link's figures."""
    return call_seconds("down") + nbytes / pcie_bytes_per_s("down", 32 * 32 * 2)


def _up_seconds(nbytes: int) -> float:
    return call_seconds("up") + nbytes / pcie_bytes_per_s("up", 32 * 32 * 2)


def test_one_stage_is_the_one_chip(runs):
    """One stage runs every chunk alone, its GDN layers' checkpoint reads issued as each GDN block ends, beside
    the blocks after it: the one-chip bench's timeline of the same prompt (bench/ttft.py's HostLinkTimeline, a
    separate model of the same issue order) to within the edges' place (the pipeline bench counts a stage's
    lone first norm at its end, so its reads go out a norm later at most)."""
    one, p = runs["one"], runs["one_stage"]
    assert [c["tokens"] for c in one["chunks"]] == [128] * 5 + [60]
    assert p["stage_busy_s"] == [pytest.approx(one["device_s"], rel=1e-12)]
    assert p["ttft_s"] == pytest.approx(one["ttft_s"], rel=0.01)
    first_embeddings = _down_seconds(CHUNK * get_preset("tiny").hidden_size * 2)
    assert p["ttft_s"] >= one["device_s"] + first_embeddings  # the first chunk's rows go down before anything
    by_kind = one["host_transfer"]["seconds_by_kind"]
    assert p["checkpoint_reads"]["busy_s"] == pytest.approx(by_kind["up gdn_checkpoint"], rel=1e-9)
    assert p["by_op"]["checkpoint_reads"] < p["checkpoint_reads"]["busy_s"]  # mostly beside the programs
    assert p["stages"] == [{"stage": 0, "layers": [0, 4], "gdn_layers": 3, "attention_layers": 1}]


def test_two_stages_overlap_but_cannot_halve(runs):
    """The programs alone (every transfer taking no time, in its place): two stages take more than half of one
    stage's time and less than all of it. With the transfers, the tiny model's two stages are slower than one
    (its programs take microseconds, as long as the rows' trips between the chips); on Qwen3.5-9B the programs
    dominate (docs/TIMING.md, "Pipeline split")."""
    from ttprefill.bench.ttft_pipeline import schedule_prompt, stage_programs, stage_shapes

    parts, head = runs["parts"], runs["head"]
    every_kind = frozenset({"embeddings", "gdn_checkpoint", "logits", "stage_handoff"})
    ends = {}
    for n in (1, 2):
        shapes = stage_shapes(get_preset("tiny"), n)
        programs = [[stage_programs(st, p, head if st.last and c == len(parts) - 1 else None).total_s
                     for c, p in enumerate(parts)] for st in shapes]
        ends[n] = schedule_prompt(shapes, parts, head, programs, "central", every_kind)[-1].makespan
    assert ends[1] / 2 < ends[2] < ends[1]
    one, two = runs["one_stage"], runs["two_stages"]
    assert two["parallel"] == "pipeline" and two["mesh_timing_version"] == MESH_TIMING_VERSION
    # the first forward fills the pipeline (stage 0 on chunks 0 and 1, stage 1 on 0), each later one runs one more
    # chunk on each stage, the last one stage 1's last chunk
    assert [f["runs"] for f in two["forwards"]] == (
        [["s0c0", "s0c1", "s1c0"]] + [[f"s0c{c + 1}", f"s1c{c}"] for c in range(1, 5)] + [["s1c5"]])
    assert two["ttft_s"] == pytest.approx(two["forwards"][-1]["end_s"])
    # by_op: the busiest stage's programs, what the hand-offs add, and its other idle time, summing to TTFT
    assert sum(two["by_op"].values()) == pytest.approx(two["ttft_s"], rel=1e-12)
    assert two["device_s"] == max(two["stage_busy_s"])
    assert two["bubble_s"] == pytest.approx(two["ttft_s"] - two["device_s"], rel=1e-12)
    # what the hand-offs add can pass their own link time: stage 1's rows wait behind stage 0's transfers on the
    # card's shared link, and stage 1 waits for its rows
    assert two["handoff"]["exposed_s"] > 0 and two["handoff"]["busy_s"] > 0


def _stage_seconds(parts, head, gdn: int, attention: int, last: bool) -> list[float]:
    """A stage's programs per chunk from the one chip's parts: its layers, its own edges, the page table update
    where it reads K/V pages, the head on the last stage's last chunk."""
    out = []
    for c, p in enumerate(parts):
        s = (gdn * (p.gdn.total_s + p.gdn_mlp.total_s) + attention * p.attention.total_s + p.edges.total_s
             + (p.page_table.total_s if attention else 0.0))
        out.append(s + (head.times.total_s if last and c == len(parts) - 1 else 0.0))
    return out


def test_stage_programs_are_the_one_chips_plus_a_stage_edge_each(runs):
    """The tiny model's layers 0-1 (GDN) on stage 0, 2 (GDN) and 3 (attention) on stage 1: together the one chip's
    programs, plus stage 1's own edges (its first norm alone, a plain add at its end); stage 0 has no attention
    layer, so no page table update."""
    one, two, parts, head = runs["one"], runs["two_stages"], runs["parts"], runs["head"]
    whole = _stage_seconds(parts, head, 3, 1, True)
    assert sum(whole) == pytest.approx(one["device_s"], rel=1e-12)  # the parts are the one-chip bench's
    stage0 = _stage_seconds(parts, head, 2, 0, False)
    stage1 = _stage_seconds(parts, head, 1, 1, True)
    assert two["stage_busy_s"] == [pytest.approx(sum(stage0), rel=1e-12), pytest.approx(sum(stage1), rel=1e-12)]
    edges = sum(p.edges.total_s for p in parts)
    assert sum(two["stage_busy_s"]) == pytest.approx(one["device_s"] + edges, rel=1e-12)
    assert [c["stage_s"] for c in two["chunks"]] == [[pytest.approx(a, rel=1e-12), pytest.approx(b, rel=1e-12)]
                                                      for a, b in zip(stage0, stage1)]
    # stage 1 starts only after stage 0's first chunk and its rows' way up and down (chip 1 of an n300: its
    # transfers take the slower of the card's PCIe link and chip 0's Ethernet; at least the PCIe time)
    rows = CHUNK * get_preset("tiny").hidden_size * 2
    assert two["ttft_s"] >= stage0[0] + _up_seconds(rows) + _down_seconds(rows) + sum(stage1)


@pytest.mark.parametrize("extra, words", [
    (["--micro-batches", "2"], "--micro-batches 2 hides a tensor-parallel split's collectives"),
    (["--fused-collectives", "fused"], "--fused-collectives fused times a tensor-parallel split's"),
    (["--scheme", "all_reduce"], "--scheme sets a tensor-parallel split's collectives"),
    (["--collective-dtype", "bfp8"], "--collective-dtype sets a tensor-parallel split's collectives"),
    (["--topology", "ring"], "--topology ring is the fabric a tensor-parallel split's collectives run on"),
    (["--mesh", "1x8"], "8 stages for 4 layers: a stage holds at least one layer; use a mesh of at most 4 chips"),
    # 32 of the 27B's 64 layers do not fit a chip (the memory plan's pipeline split): refused before any simulation
    (["--model", "qwen3.5-27b", "--mesh", "1x2"], "qwen3.5-27b does not fit"),
])
def test_refuses_what_does_not_apply_to_a_pipeline(capsys, extra, words):
    code = cli.main(ARGS + ["--parallel", "pipeline"] + extra)
    out, err = capsys.readouterr()
    assert code != 0 and words in err and not out
