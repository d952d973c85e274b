"""`ttprefill prefill --mesh RxC --backend tt` under the default scheme (reduce_scatter) on ttnn's mock clusters,
side by side with the simulator's SimMesh (prefill_driver.py records both): an n300 (1x2), a T3000 as 2x4 (a
line fabric on either axis) and as 1x8 with `--topology ring` (FABRIC_1D_RING). The card path dispatches the
same programs, the same collectives with the same per-chip shapes and the same reads as the simulator, and the
collectives are the ones the scheme implies, derived here by hand; the CLI closes the mesh it opened (its fabric
disabled after), also when the prefill fails once the mesh is open. No kernel executes on the mock, so nothing
of values or time is checked (tests/test_mesh_prefill_reduce_scatter.py checks values on the simulator)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

import numpy as np
import pytest
from test_mock_prefill import BLOCK, HERE, MAIN_PYTHON, TILE, _events, _start

HIDDEN, LAYERS = 256, 4  # the tiny preset's figures (and tiny-8way's, prefill_driver.py), written out


@dataclass(frozen=True)
class Case:
    cluster: str  # the mock cluster: n300, or t3000 (mesh_clusters.py)
    mesh: tuple[int, int]
    topology: str
    model: str
    tokens: int
    chunks: tuple[int, ...]  # --chunk 64 cuts the prompt into these

    @property
    def chips(self) -> int:
        return self.mesh[0] * self.mesh[1]


CASES = {
    "n300": Case("n300", (1, 2), "line", "tiny", 100, (64, 36)),
    "t3000-2x4": Case("t3000", (2, 4), "line", "tiny-8way", 64, (64,)),
    "t3000-1x8-ring": Case("t3000", (1, 8), "ring", "tiny-8way", 64, (64,)),
}
FABRICS = {"line": "FabricConfig.FABRIC_1D", "ring": "FabricConfig.FABRIC_1D_RING"}


def _mock_env(work, cluster: str):
    import mesh_clusters
    import mock_env

    if not MAIN_PYTHON.exists():
        pytest.fail(f"the mesh prefill on the mock runs its engine in the main environment ({MAIN_PYTHON}): create "
                    "it with scripts/setup-env")
    env = mock_env.build(work, "n300")  # a T3000 is four n300 boards: its descriptor replaces the n300's
    if cluster == "t3000":
        env.descriptor.write_text(mesh_clusters.t3000_descriptor())
    mock = env.environ()
    mock["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[2]), mock.get("PYTHONPATH", "")])
    mock["TTPREFILL_BRIDGE_PYTHON"] = sys.executable
    return mock


def _wait(work, procs: dict) -> dict:
    out = {}
    for backend, proc in procs.items():
        proc.wait(timeout=900)
        log = (work / f"{backend}.log").read_text()
        assert proc.returncode == 0, f"{backend} driver failed:\n{log[-6000:]}"
        out[backend] = json.loads((work / f"{backend}.json").read_text())
        assert "error" not in out[backend], out[backend]["traceback"]
    return out


@pytest.fixture(scope="module", params=sorted(CASES))
def runs(request, tmp_path_factory) -> dict:
    case = CASES[request.param]
    work = tmp_path_factory.mktemp(f"mock-prefill-reduce-scatter-{request.param}")
    tokens = work / "tokens.txt"
    tokens.write_text(" ".join(map(str, np.random.default_rng(8).integers(0, 1024, case.tokens))))
    mock = _mock_env(work, case.cluster)
    plain = dict(os.environ, PYTHONPATH=mock["PYTHONPATH"])
    mesh = f"{case.mesh[0]}x{case.mesh[1]}"
    procs = {backend: _start([backend, mesh, case.model, str(tokens), str(BLOCK), str(work / f"{backend}.json"),
                              "reduce_scatter", case.topology], environ, work / f"{backend}.log")
             for backend, environ in (("tt", mock), ("sim", plain))}
    out = _wait(work, procs)
    for backend in out:
        assert out[backend]["exit_code"] == 0, out[backend]["stderr"]
    return {"case": case, **out}


def test_the_card_path_dispatches_what_the_simulator_does(runs):
    for kind in ("program", "collective", "read"):
        tt, sim = _events(runs["tt"], kind), _events(runs["sim"], kind)
        assert len(tt) > 0 and tt == sim, kind


def _gathered(rows: int, mesh: tuple[int, int]) -> list:
    """All-gathers of each chip's `rows` rows over the mesh, one axis at a time, columns first."""
    out, (mesh_rows, mesh_cols), chips = [], mesh, mesh[0] * mesh[1]
    for size in (mesh_cols, mesh_rows):
        if size > 1:
            out.append(["all_gather", [[rows, HIDDEN]] * chips, [[rows * size, HIDDEN]] * chips])
            rows *= size
    return out


def _scattered(rows: int, mesh: tuple[int, int]) -> list:
    """Reduce-scatters of [rows, hidden] partial sums over the mesh, one axis at a time, rows first."""
    out, (mesh_rows, mesh_cols), chips = [], mesh, mesh[0] * mesh[1]
    for size in (mesh_rows, mesh_cols):
        if size > 1:
            out.append(["reduce_scatter", [[rows, HIDDEN]] * chips, [[rows // size, HIDDEN]] * chips])
            rows //= size
    return out


def test_the_collectives_are_the_schemes(runs):
    case = runs["case"]
    expected = []
    for t in case.chunks:
        rows = -(-t // (TILE * case.chips)) * TILE  # each chip's tokens, padded to whole tile rows: 32 here
        for _ in range(2 * LAYERS):  # per block: gather the chips' normed rows, scatter the padded partial sums
            expected += _gathered(rows, case.mesh) + _scattered(rows * case.chips, case.mesh)
    expected += _gathered(TILE, case.mesh)  # the final norm's tile row, before the logits
    axes = sum(size > 1 for size in case.mesh)
    gathered = _events(runs["tt"], "collective")
    assert gathered[:-axes] == expected  # then the logits rows, an all-gather per mesh axis (test_mock_prefill)
    assert [kind for kind, *_ in gathered[-axes:]] == ["all_gather"] * axes
    blocks = 2 * LAYERS * len(case.chunks)
    assert runs["tt"]["result"]["collectives"]["count"] == {"all_gather": axes * (blocks + 2),
                                                            "reduce_scatter": axes * blocks}


def test_the_mesh_opens_with_the_topologys_fabric_and_the_cli_closes_it(runs):
    case = runs["case"]
    closes = [e for e in runs["tt"]["events"] if e[0] == "close"]
    assert closes == [["close", {"fabric_when_open": FABRICS[case.topology], "mesh_open": False,
                                 "stage_meshes_open": [], "fabric_after_close": "FabricConfig.DISABLED"}]]
    assert runs["tt"]["events"][-1][0] == "close"  # after the last read


def test_a_prefill_that_fails_with_the_mesh_open_still_closes_it(tmp_path):
    """A cache budget under one chunk's pages is refused by the engine, after the CLI opened the mesh."""
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(" ".join(map(str, range(100))))
    mock = _mock_env(tmp_path, "n300")
    out = _wait(tmp_path, {"tt": _start(["tt", "1x2", "tiny", str(tokens), str(BLOCK), str(tmp_path / "tt.json"),
                                         "reduce_scatter", "line", "--cache-budget-mb", "0.001"], mock,
                                        tmp_path / "tt.log")})
    report = out["tt"]
    assert report["exit_code"] == 2 and "cache budget" in report["stderr"], report["stderr"]
    assert [e for e in report["events"] if e[0] != "close"] == []  # nothing ran
    assert [e for e in report["events"] if e[0] == "close"] == [
        ["close", {"fabric_when_open": FABRICS["line"], "mesh_open": False, "stage_meshes_open": [],
                   "fabric_after_close": "FabricConfig.DISABLED"}]]
