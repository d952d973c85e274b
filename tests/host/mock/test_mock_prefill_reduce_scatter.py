"""`ttprefill prefill --mesh 1x2 --backend tt --scheme reduce_scatter` (the default scheme) on ttnn's mock n300,
side by side with the simulator's SimMesh (prefill_driver.py records both): the card path dispatches the same
programs, the same collectives with the same per-chip shapes and the same reads as the simulator, and the
collectives are the ones the scheme implies, derived here by hand. No kernel executes on the mock, so nothing of
values or time is checked (tests/test_mesh_prefill_reduce_scatter.py checks values on the simulator)."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest
from test_mock_prefill import BLOCK, HERE, MAIN_PYTHON, TILE, _events, _start

TOKENS, CHUNKS, HIDDEN, LAYERS = 100, (64, 36), 256, 4  # the tiny preset's figures, written out
CHIPS = 2


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    import mock_env

    if not MAIN_PYTHON.exists():
        pytest.fail(f"the mesh prefill on the mock runs its engine in the main environment ({MAIN_PYTHON}): create "
                    "it with scripts/setup-env")
    work = tmp_path_factory.mktemp("mock-prefill-reduce-scatter")
    tokens = work / "tokens.txt"
    tokens.write_text(" ".join(map(str, np.random.default_rng(8).integers(0, 1024, TOKENS))))
    env = mock_env.build(work, "n300")
    mock = env.environ()
    mock["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[2]), mock.get("PYTHONPATH", "")])
    mock["TTPREFILL_BRIDGE_PYTHON"] = sys.executable
    plain = dict(os.environ, PYTHONPATH=mock["PYTHONPATH"])
    out, procs = {}, {}
    for backend, environ in (("tt", mock), ("sim", plain)):
        procs[backend] = _start([backend, "1x2", "tiny", str(tokens), str(BLOCK), str(work / f"{backend}.json"),
                                 "reduce_scatter"], environ, work / f"{backend}.log")
    for backend, proc in procs.items():
        proc.wait(timeout=900)
        log = (work / f"{backend}.log").read_text()
        assert proc.returncode == 0, f"{backend} driver failed:\n{log[-6000:]}"
        out[backend] = json.loads((work / f"{backend}.json").read_text())
        assert "error" not in out[backend], out[backend]["traceback"]
        assert out[backend]["exit_code"] == 0, out[backend]["stderr"]
    return out


def test_the_card_path_dispatches_what_the_simulator_does(runs):
    for kind in ("program", "collective", "read"):
        tt, sim = _events(runs["tt"], kind), _events(runs["sim"], kind)
        assert len(tt) > 0 and tt == sim, kind


def test_the_collectives_are_the_schemes(runs):
    expected = []
    for t in CHUNKS:
        rows = -(-t // (TILE * CHIPS)) * TILE  # each chip's tokens, padded to whole tile rows: 32 for 64 and 36
        for _ in range(2 * LAYERS):  # per block: gather the chips' normed rows, scatter the padded partial sums
            expected.append(["all_gather", [[rows, HIDDEN]] * CHIPS, [[CHIPS * rows, HIDDEN]] * CHIPS])
            expected.append(["reduce_scatter", [[CHIPS * rows, HIDDEN]] * CHIPS, [[rows, HIDDEN]] * CHIPS])
    expected.append(["all_gather", [[TILE, HIDDEN]] * CHIPS, [[CHIPS * TILE, HIDDEN]] * CHIPS])  # final norm's tile row
    gathered = _events(runs["tt"], "collective")
    assert gathered[:-1] == expected  # then the logits rows (as under all_reduce, test_mock_prefill)
    assert gathered[-1][0] == "all_gather"
    assert runs["tt"]["result"]["collectives"]["count"] == {"all_gather": 2 * LAYERS * len(CHUNKS) + 2,
                                                            "reduce_scatter": 2 * LAYERS * len(CHUNKS)}
