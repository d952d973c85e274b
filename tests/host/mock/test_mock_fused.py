"""TTDevice's fused matmul + collective ops (device/fused_ccl.py) on ttnn's mock n300 and T3000 (fused_driver.py).

The mock executes no kernel, so these tests check the host path against ttnn 0.81.1's documented semantics: the
calls are accepted with their semaphores and persistent buffers, the gathered tensor is every chip's columns, the
matmul's output follows the weight's columns, the reduce-scatter leaves each chip 1/chips of the columns of the
sum; and what ttnn refuses is refused: the fused all-gather on a mesh of two chips (ttnn's own error recorded
from the raw call), both ops on a 2-D mesh (no cluster axis in 0.81.1)."""

from __future__ import annotations

import pytest

M, K_PER_CHIP, N = 256, 256, 512  # fused_driver.py's shapes


def _run(cluster: str, tmp_path_factory) -> dict:
    import mesh_clusters
    import mock_env

    descriptor = mesh_clusters.t3000_descriptor() if cluster == "t3000" else None
    _, report = mock_env.run_driver(tmp_path_factory.mktemp(f"mock-fused-{cluster}"), "n300", "fused_driver.py", cluster,
                                    descriptor=descriptor)
    assert report["cluster"] == cluster
    return report


@pytest.fixture(scope="module")
def n300_report(tmp_path_factory) -> dict:
    return _run("n300", tmp_path_factory)


@pytest.fixture(scope="module")
def t3000_report(tmp_path_factory) -> dict:
    return _run("t3000", tmp_path_factory)


def _ok(entry: dict) -> dict:
    assert "error" not in entry, entry.get("traceback", entry.get("error"))
    return entry


def _mesh(report: dict, key: str) -> dict:
    mesh = report["meshes"][key]
    assert "traceback" not in mesh, mesh["traceback"]
    return mesh


def _reduce_scatter_shapes(mesh: dict, chips: int) -> None:
    for batches in (1, 4):
        r = _ok(mesh[f"matmul_reduce_scatter/{batches}"])
        # every chip's own partial product, then 1/chips of the sum's columns on each chip
        assert r["mm"]["shape"] == [M, N]
        assert r["reduced"]["shape"] == [M, N // chips] and r["reduced"]["global_shape"] == [M, N]
        assert "shard1" in r["reduced"]["placements"]


def test_n300_runs_matmul_reduce_scatter_and_refuses_the_fused_gather_as_ttnn_does(n300_report):
    mesh = _mesh(n300_report, "1x2 line")
    _reduce_scatter_shapes(mesh, 2)
    assert "mesh of two chips as a line" in mesh["all_gather_matmul"]["error"]
    # ttnn's own answer to the call TTDevice refuses
    assert "linear is not support when using fused for all-gather" in mesh["all_gather_matmul_raw"]["error"]


def test_t3000_ring_of_eight_runs_both_and_the_2x4_mesh_is_refused(t3000_report):
    ring = _mesh(t3000_report, "1x8 ring")
    ag = _ok(ring["all_gather_matmul"])
    assert ag["gathered"]["shape"] == [M, 8 * K_PER_CHIP] and set(ag["gathered"]["placements"]) == {"replicate"}
    # the weight's columns were sharded over the chips, and so are the matmul's
    assert ag["out"]["shape"] == [M, N // 8] and ag["out"]["global_shape"] == [M, N]
    _reduce_scatter_shapes(ring, 8)
    lines = _mesh(t3000_report, "2x4 line")
    for key in ("all_gather_matmul", "matmul_reduce_scatter/1", "matmul_reduce_scatter/4"):
        assert "open the 2x4 mesh as 1x8" in lines[key]["error"]
