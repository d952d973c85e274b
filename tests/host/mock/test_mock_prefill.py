"""`ttprefill prefill --mesh RxC --backend tt` on ttnn's mock n300 (1x2) and T3000 (2x4): a tiny model split
tensor-parallel over the card path's mesh (TTDevice: ttnn's mesh mappers, from_host_shards, get_device_tensors,
all_reduce, all_gather over each mesh axis), a prompt run to the end; and on a mock n150, the whole model on
its one chip.

The engine needs torch, which this environment must not hold, so the CLI runs in the main .venv and TTDevice
runs in this environment, on the mock, behind card_bridge.py (prefill_driver.py records what the executor was asked). The
same prompt runs on the simulator's SimMesh in the main .venv (timing only, its first chip simulated for all:
what is dispatched and read does not depend on values, and the mock's run has none either). A mock executes no kernel and its reads give
zeros, so the checks are what the host path did: the programs dispatched, in order, and the collectives, the
per-chip shapes ttnn reports for every tensor the split holds, and what every read brought back, each against
the simulator's run and, where it can be derived from the model's config by hand, against that.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
MAIN_PYTHON = REPO / ".venv" / "bin" / "python"  # the main environment: torch and the simulator
DRIVER_TIMEOUT_S = 900
TILE, BLOCK = 32, 64  # a tile's rows; the prefix cache's block (EngineOptions.block_tokens)
PAGE_VALUES = 1024  # bf16 values in a row-major page (a tile's bytes)


@dataclass(frozen=True)
class Case:
    """A mesh, the preset it splits (its figures written out here, so the shapes below are derived
    independently of ttprefill's config), and a prompt."""

    cluster: str
    mesh: tuple[int, int]
    model: str
    tokens: int
    chunks: tuple[int, ...]  # --chunk 64 cuts the prompt into these
    gdn_qk: int
    gdn_v: int
    attn_q: int
    attn_kv: int
    vocab: int = 1024
    hidden: int = 256
    layers: int = 4
    attention_layers: tuple[int, ...] = (3,)
    ffn: int = 512
    head_dim: int = 64  # GDN key and value heads and attention heads alike

    @property
    def chips(self) -> int:
        return self.mesh[0] * self.mesh[1]


CASES = {
    # an n150: the whole tiny model on its one chip (no split, no collectives), the n300's prompt
    "n150": Case("n150", (1, 1), "tiny", 100, (64, 36), gdn_qk=2, gdn_v=4, attn_q=4, attn_kv=2),
    # an n300: the tiny preset over its two chips, 100 tokens in two chunks
    "n300": Case("n300", (1, 2), "tiny", 100, (64, 36), gdn_qk=2, gdn_v=4, attn_q=4, attn_kv=2),
    # a T3000 as 2x4: tiny with heads for eight chips (prefill_driver.py), 64 tokens in one chunk
    "t3000": Case("t3000", (2, 4), "tiny-8way", 64, (64,), gdn_qk=4, gdn_v=8, attn_q=8, attn_kv=2),
}


def _start(args, env, log: Path):
    return subprocess.Popen([str(MAIN_PYTHON), str(HERE / "prefill_driver.py"), *args], env=env,
                            stdout=log.open("w"), stderr=subprocess.STDOUT)


@pytest.fixture(scope="module", params=sorted(CASES))
def runs(request, tmp_path_factory) -> dict:
    import mesh_clusters
    import mock_env

    case = CASES[request.param]
    if not MAIN_PYTHON.exists():
        pytest.fail(f"the mesh prefill on the mock runs its engine in the main environment ({MAIN_PYTHON}, which "
                    "has torch and the simulator): create it with scripts/setup-env")
    work = tmp_path_factory.mktemp(f"mock-prefill-{case.cluster}")
    tokens = work / "tokens.txt"
    tokens.write_text(" ".join(map(str, np.random.default_rng(8).integers(0, case.vocab, case.tokens))))
    env = mock_env.build(work, "n150" if case.cluster == "n150" else "n300")
    if case.cluster == "t3000":
        env.descriptor.write_text(mesh_clusters.t3000_descriptor())
    mock = env.environ()
    mock["PYTHONPATH"] = os.pathsep.join([str(REPO), mock.get("PYTHONPATH", "")])
    mock["TTPREFILL_BRIDGE_PYTHON"] = sys.executable  # TTDevice runs in this (the ttnn) environment
    plain = dict(os.environ, PYTHONPATH=mock["PYTHONPATH"])  # the simulator's run: no mock, no ttnn
    mesh = f"{case.mesh[0]}x{case.mesh[1]}"
    reports, procs = {}, {}
    t0 = time.perf_counter()
    for backend, environ in (("tt", mock), ("sim", plain)):  # side by side
        reports[backend] = work / f"{backend}.json"
        procs[backend] = _start([backend, mesh, case.model, str(tokens), str(BLOCK), str(reports[backend])],
                                environ, work / f"{backend}.log")
    out = {"case": case}
    for backend, proc in procs.items():
        proc.wait(timeout=DRIVER_TIMEOUT_S)
        log = (work / f"{backend}.log").read_text()
        assert proc.returncode == 0 and reports[backend].exists(), f"{backend} driver failed:\n{log[-6000:]}"
        out[backend] = json.loads(reports[backend].read_text())
        assert "error" not in out[backend], out[backend]["traceback"]
    print(f"\nmock {case.cluster} {mesh} prefill: {out['tt']['wall_s']:.1f} s on the card path, "
          f"{out['sim']['wall_s']:.1f} s on the simulator, {time.perf_counter() - t0:.1f} s side by side")
    return out


def _events(report, kind):
    return [e[1:] for e in report["events"] if e[0] == kind]


def _tiles(rows, cols):
    return -(-rows // TILE) * -(-cols // TILE)


def _per_chip(case: Case) -> dict:
    """A chip's share (the split the issue describes): GDN v heads and attention q heads divided, each chip with
    the q/k (kv) heads its own read, shared where chips outnumber them; the MLP's width and the vocabulary divided."""
    return {"qk": max(1, case.gdn_qk // case.chips), "v": case.gdn_v // case.chips,
            "q": case.attn_q // case.chips, "kv": max(1, case.attn_kv // case.chips),
            "ffn": case.ffn // case.chips, "vocab": case.vocab // case.chips}


def test_the_prefill_runs_to_the_end_on_the_mock_card_path(runs):
    case, tt = runs["case"], runs["tt"]
    assert tt["exit_code"] == 0, tt["stderr"]
    r = tt["result"]
    assert r["backend"] == "tt" and r["mesh"] == list(case.mesh) and r["tokens"] == case.tokens
    assert r["chunks"] == len(case.chunks) and len(r["last_logits"]) == case.vocab
    assert not any(r["last_logits"])  # the mock ran it: no kernel executes and reads give zeros
    assert "modeled_s" not in r and r["collectives"]["modeled"] is False  # nothing is modeled on a card


def test_every_program_is_dispatched_in_the_order_the_simulators_mesh_split_dispatches_it(runs):
    tt, sim = _events(runs["tt"], "program"), _events(runs["sim"], "program")
    assert len(tt) > 0 and tt == sim
    # one program on every chip (the split gives every chip the same programs): no per-chip dispatch
    assert {kind for kind, _ in tt} == {"run"}


def test_the_collectives_are_the_simulators_and_one_all_reduce_per_row_parallel_projection(runs):
    case = runs["case"]
    tt, sim = _events(runs["tt"], "collective"), _events(runs["sim"], "collective")
    assert tt == sim
    n, H = case.chips, case.hidden
    # per chunk: the mixer's output projection and the MLP's down projection of every layer leave [T, H]
    # partial sums on each chip, summed on every chip
    expected = [["all_reduce", [[t, H]] * n, [[t, H]] * n] for t in case.chunks for _ in range(2 * case.layers)
                if n > 1]
    # then each chip's last-token logits row (its vocabulary share in row-major pages of 1024 values, [32, 32]
    # tiles) is gathered along the mesh's columns, then along its rows (a 1-D fabric gathers one axis at a time)
    width = TILE * -(-_per_chip(case)["vocab"] // PAGE_VALUES)
    for size in (case.mesh[1], case.mesh[0]):
        if size > 1:
            expected.append(["all_gather", [[TILE, width]] * n, [[TILE, width * size]] * n])
            width *= size
    assert tt == expected
    gathers = sum(size > 1 for size in case.mesh)
    count = {"all_reduce": 2 * case.layers * len(case.chunks), "all_gather": gathers} if n > 1 else {}
    assert runs["tt"]["result"]["collectives"]["count"] == count
    assert runs["tt"]["result"]["collectives"]["bytes_per_chip"] == runs["sim"]["result"]["collectives"]["bytes_per_chip"]


def _expected_weights(case: Case) -> Counter:
    """Each chip's share of the resident weights whose shape the split fixes (k_in x n_out matrices), counted:
    per GDN layer in_proj_qkv (the chip's q, k and v channels), out_proj and the conv taps; per attention layer
    the fused q|k|v projection and o_proj; per layer the MLP's gate | up (one weight, the chip's gate and up
    columns paired: twice its ffn share) and down; the LM head. (Norms, per-head
    vectors and how the GDN z / b / a projections are laid out are the stack's choice, checked against the
    simulator's only.)"""
    c, H, D = _per_chip(case), case.hidden, case.head_dim
    conv = 2 * c["qk"] * D + c["v"] * D
    out = Counter()
    for layer in range(case.layers):
        if layer in case.attention_layers:
            out.update([(H, c["q"] * 2 * D + 2 * c["kv"] * D), (c["q"] * D, H)])
        else:
            out.update([(H, conv), (c["v"] * D, H), (4 * TILE, conv)])
        out.update([(H, 2 * c["ffn"]), (c["ffn"], H)])
    out.update([(H, c["vocab"])])
    return out


def test_ttnn_reports_the_plans_shard_shape_on_every_chip(runs):
    case = runs["case"]
    tt, sim = runs["tt"]["held"], runs["sim"]["held"]
    assert tt == sim
    weights, pools = tt[:-2], tt[-2:]
    assert all(shapes == [shapes[0]] * case.chips for shapes in tt)  # every chip holds the same shape
    held = Counter(tuple(shapes[0]) for shapes in weights)
    assert not _expected_weights(case) - held  # every one the split fixes is there, as often
    pages = pools[0][0][0]
    kv = _per_chip(case)["kv"]
    assert pools == [[[pages, kv, BLOCK, case.head_dim]] * case.chips] * 2  # each chip's kv heads of every page


def test_every_read_brings_back_what_the_simulators_does_and_the_split_derives(runs):
    case = runs["case"]
    tt, sim = _events(runs["tt"], "read"), _events(runs["sim"], "read")
    assert tt == sim
    c, D, n = _per_chip(case), case.head_dim, case.chips
    conv = 2 * c["qk"] * D + c["v"] * D
    rows, row_pages = 3, -(-conv // PAGE_VALUES)  # the conv state's kernel - 1 rows, each in whole pages
    rec = [c["v"] * D, D]  # the recurrent state of the chip's v heads, fp32
    gdn_layers = case.layers - len(case.attention_layers)
    expected, end = [], 0
    width = -(-c["vocab"] // PAGE_VALUES) * n
    for i, t in enumerate(case.chunks):
        end += t
        if i == len(case.chunks) - 1:
            # the gathered logits row, once, every chip's pages: read as the last chunk runs, before the chunk's
            # checkpoint reads are taken (DeviceStack.start, then finish)
            expected.append(["read_pages", [TILE, TILE * width], [0, width], [width * 2048]])
        if end % BLOCK == 0:
            # a chunk ending on a prefix-cache block keeps its end state: per GDN layer, each chip's shard of the
            # conv rows (row-major bf16 pages) and of the recurrent state (fp32 tiles), each read whole
            # (one chip: the same two reads of its whole tensors)
            pages = rows * row_pages
            for _ in range(gdn_layers):
                for chip in range(n):
                    conv_rows, rec_tiles = [TILE, TILE * pages], _tiles(*rec)
                    if n == 1:
                        expected.append(["read_pages", conv_rows, [0, pages], [pages * 2048]])
                        expected.append(["read_pages", rec, [0, rec_tiles], [rec_tiles * 4096]])
                    else:
                        expected.append(["read_shard_pages", conv_rows, [chip, 0, pages], [pages * 2048]])
                        expected.append(["read_shard_pages", rec, [chip, 0, rec_tiles], [rec_tiles * 4096]])
    if end % BLOCK:  # the prompt's end state was not a checkpoint: it comes up whole for the result
        for _ in range(gdn_layers):
            if n == 1:
                expected += [["download", [rows, conv], [], [rows, conv]], ["download", rec, [], rec]]
            else:
                expected += [["download_shards", [rows, conv], [], [[rows, conv]] * n],
                             ["download_shards", rec, [], [rec] * n]]
    assert tt == expected


def test_the_card_is_closed_after_the_prefill(runs):
    """The CLI closes the mesh it opened; on one chip the engine opened the card itself and closes it. A mesh
    opens with the line fabric (FABRIC_1D) its collectives run on, one chip with none; closed, none is left."""
    case = runs["case"]
    fabric = "FabricConfig.DISABLED" if case.chips == 1 else "FabricConfig.FABRIC_1D"
    assert [e for e in runs["tt"]["events"] if e[0] == "close"] == [
        ["close", {"fabric_when_open": fabric, "mesh_open": False, "stage_meshes_open": [],
                   "fabric_after_close": "FabricConfig.DISABLED"}]]
    assert runs["tt"]["events"][-1][0] == "close"
