"""The card path's mesh on ttnn's mock n300 with fabric (mesh_driver.py): ttnn's mesh mappers and composers,
its collectives and MeshProgramDescriptor, dispatched through TTDevice. The mock executes no kernel, so
these tests check the host path: what opened, the shapes and placements ttnn produced, that each call was
made without error, and the links ttnn gives collectives (the figure hw.py's Ethernet model uses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ttprefill import hw

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DRIVER_TIMEOUT_S = 600


@pytest.fixture(scope="module")
def mesh_report(tmp_path_factory) -> dict:
    import mock_env

    work = tmp_path_factory.mktemp("mock-mesh-n300")
    env = mock_env.build(work, "n300")
    environ = env.environ()
    environ["PYTHONPATH"] = os.pathsep.join([str(REPO), environ.get("PYTHONPATH", "")])
    out = work / "mesh_report.json"
    proc = subprocess.run([sys.executable, str(HERE / "mesh_driver.py"), str(out)], env=environ,
                          capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S)
    assert proc.returncode == 0 and out.exists(), f"mesh driver failed:\n{proc.stderr[-6000:]}"
    return json.loads(out.read_text())


def _no_error(entry):
    assert "error" not in entry, entry.get("traceback", entry.get("error"))
    return entry


def test_an_n300_mock_opens_as_a_1x2_mesh_with_a_1d_fabric(mesh_report):
    r = mesh_report
    assert r["mock"] is True and r["chips"] == 2 and r["has_mesh"] is True
    assert r["chip_grids"] == [[0, 8, 8], [1, 8, 8]]
    assert r["fabric"] == "FabricConfig.FABRIC_1D"


def test_ttnn_gives_collectives_the_links_the_timing_model_uses(mesh_report):
    """ttnn's get_num_links leaves out the link dispatch reserves: one of the n300's two."""
    assert set(mesh_report["ccl_links"].values()) == {hw.ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR}
    assert hw.ETH_LINKS_PER_NEIGHBOUR_PAIR - hw.ETH_DISPATCH_RESERVED_LINKS == 1


@pytest.mark.parametrize("name,shape,placements", [
    ("replicate", [64, 128], ["replicate", "replicate"]),
    ("shard0", [32, 128], ["shard0", "shard0"]),
    ("shard1", [64, 64], ["shard1", "shard1"]),
    ("rows0_cols1", [64, 64], ["shard0", "shard1"]),  # 1 row: only the column axis splits
    ("rep_cols1", [64, 64], ["replicate", "shard1"]),
])
def test_mesh_mappers_place_and_composers_gather(mesh_report, name, shape, placements):
    e = _no_error(mesh_report["placement"])[name]
    assert e["shape"] == shape and e["placements"] == placements
    assert e["shard_shapes"] == [shape, shape]  # one shard per chip
    assert e["global_shape"] == e["download_shape"] == [64, 128]
    assert e["pages"] == (shape[0] // 32) * (shape[1] // 32)


def test_a_shard_that_does_not_divide_is_refused_naming_the_numbers(mesh_report):
    msg = _no_error(mesh_report["placement"])["not_divisible"]
    assert "dim 1 of size 33 over 2 chips" in msg and "pad dim 1 to a multiple of 2" in msg


@pytest.mark.parametrize("name,shape,global_shape,placements", [
    ("all_gather", [64, 256], [64, 256], ["replicate", "replicate"]),
    ("all_gather_axis1", [64, 256], [64, 256], ["replicate", "replicate"]),
    ("reduce_scatter_axis1", [64, 128], [64, 256], ["replicate", "shard1"]),
    ("all_reduce_axis1", [64, 256], [64, 256], ["replicate", "replicate"]),
])
def test_ttnn_collectives_run_on_the_mesh(mesh_report, name, shape, global_shape, placements):
    e = _no_error(_no_error(mesh_report["collectives"])[name])
    assert e["shape"] == shape and e["global_shape"] == global_shape and e["placements"] == placements
    assert e["download_shape"] == global_shape


def test_one_program_on_both_chips_and_a_program_per_chip(mesh_report):
    p = _no_error(mesh_report["programs"])
    assert p["spmd"]["dispatched"] and p["spmd"]["tiles_per_chip"] == 4 and p["spmd"]["download_shape"] == [128, 64]
    assert p["per_chip"] == {"dispatched": True, "tiles": [1, 2]}
    assert "must list the same input and output tensors" in p["mismatched_tensors"]


def test_a_ring_fabric_opens_and_all_reduces(mesh_report):
    assert _no_error(mesh_report["ring"]) == {"all_reduce_shape": [64, 128]}
