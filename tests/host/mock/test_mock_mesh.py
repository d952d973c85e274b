"""The card path's mesh on ttnn's mock n300 and T3000 with fabric (mesh_driver.py): ttnn's mesh mappers and
composers, its collectives and MeshProgramDescriptor, dispatched through TTDevice. The mock executes no
kernel, so these tests check the host path: what opened, the shapes and placements ttnn produced against
ttnn's documented semantics, that each call was made without error, and the links ttnn gives collectives
(the figure hw.py's Ethernet model uses)."""

from __future__ import annotations

import pytest

from ttprefill import hw

# Per cluster: the meshes the driver opens (first one with the placement and program checks).
MESHES = {"n300": [((1, 2), "line"), ((1, 2), "ring")], "t3000": [((2, 4), "line"), ((1, 8), "ring")]}


@pytest.fixture(scope="module", params=sorted(MESHES))
def mesh_report(request, tmp_path_factory) -> dict:
    import mesh_clusters
    import mock_env

    cluster = request.param
    descriptor = mesh_clusters.t3000_descriptor() if cluster == "t3000" else None
    _, report = mock_env.run_driver(tmp_path_factory.mktemp(f"mock-mesh-{cluster}"), "n300", "mesh_driver.py", cluster,
                                    descriptor=descriptor)
    assert report["cluster"] == cluster
    return report


def _no_error(entry):
    assert "error" not in entry, entry.get("traceback", entry.get("error"))
    return entry


def _meshes(report):
    for mesh_shape, topology in MESHES[report["cluster"]]:
        yield mesh_shape, topology, _no_error(report["meshes"][f"{mesh_shape[0]}x{mesh_shape[1]} {topology}"])


def _first(report):
    return next(_meshes(report))


def test_each_mesh_opens_with_its_fabric_and_a_full_grid_on_every_chip(mesh_report):
    for (rows, cols), topology, m in _meshes(mesh_report):
        assert m["mock"] is True and m["chips"] == rows * cols and m["has_mesh"] is True
        assert m["mesh_shape"] == [rows, cols]
        assert sorted(chip for chip, _, _ in m["chip_grids"]) == list(range(rows * cols))
        assert all((x, y) == (8, 8) for _, x, y in m["chip_grids"])
        assert m["fabric"] == {"line": "FabricConfig.FABRIC_1D", "ring": "FabricConfig.FABRIC_1D_RING"}[topology]


def test_ttnn_gives_collectives_the_links_the_timing_model_uses(mesh_report):
    """ttnn's get_num_links leaves out the link dispatch reserves: of two cabled links, one."""
    for _, _, m in _meshes(mesh_report):
        assert set(m["ccl_links"].values()) == {hw.ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR}


def test_ttnn_fabric_packets_carry_the_payload_the_timing_model_packs(mesh_report):
    """The fabric packet's payload under FABRIC_1D and FABRIC_1D_RING, which sets the pages a packet holds."""
    for _, _, m in _meshes(mesh_report):
        assert m["fabric_max_payload_bytes"] == hw.FABRIC_MAX_PAYLOAD_BYTES


def _per_chip(shape, placements, mesh_shape):
    """A [64, 128] tensor's shard under ttnn's mapper semantics (row axis splits first)."""
    out = list(shape)
    for axis, p in enumerate(placements):
        if p != "replicate":
            out[int(p[-1])] //= mesh_shape[axis]
    return out


@pytest.mark.parametrize("name,placements", [
    ("replicate", ["replicate", "replicate"]), ("shard0", ["shard0", "shard0"]), ("shard1", ["shard1", "shard1"]),
    ("rows0_cols1", ["shard0", "shard1"]), ("rep_cols1", ["replicate", "shard1"]),
])
def test_mesh_mappers_place_and_composers_gather(mesh_report, name, placements):
    mesh_shape, _, m = _first(mesh_report)
    e = _no_error(m["placement"])[name]
    shape = _per_chip([64, 128], placements, mesh_shape)
    assert e["shape"] == shape and e["placements"] == placements
    assert e["shard_shapes"] == [shape] * (mesh_shape[0] * mesh_shape[1])  # one shard per chip
    assert e["global_shape"] == e["download_shape"] == [64, 128]
    assert e["pages"] == -(-shape[0] // 32) * -(-shape[1] // 32)


def test_a_shard_that_does_not_divide_is_refused_naming_the_numbers(mesh_report):
    (rows, cols), _, m = _first(mesh_report)
    n = rows * cols
    msg = _no_error(m["placement"])["not_divisible"]
    assert f"dim 1 of size 33 over {n} chips" in msg and f"pad dim 1 to a multiple of {n}" in msg


def _expected_collectives(mesh_shape):
    """Shapes and labels as ttnn documents them, for the driver's inputs: a [64, 256 * chips] tensor sharded
    on dim 1 over all chips (256 columns a chip) for all_gather; a replicated [64, 256] for the reductions."""
    rows, cols = mesh_shape
    out = {}
    for axis in [a for a, size in enumerate(mesh_shape) if size > 1] + [None]:
        key = "all" if axis is None else axis
        n = rows * cols if axis is None else mesh_shape[axis]
        if axis is not None or rows == 1:  # a whole-mesh all-gather on a 2-D mesh needs a 2-D fabric
            out[f"all_gather/{key}"] = ([64, 256 * n], [64, 256 * n], ["replicate", "replicate"])
        if axis is None:
            label = ["shard1" if size > 1 else "replicate" for size in mesh_shape]
        else:
            label = ["replicate", "replicate"]
            label[axis] = "shard1"
        out[f"reduce_scatter/{key}"] = ([64, 256 // n], [64, 256], label)
        out[f"all_reduce/{key}"] = ([64, 256], [64, 256], ["replicate", "replicate"])
    return out


def test_ttnn_collectives_run_on_every_axis_and_label_their_outputs_as_ttnn_does(mesh_report):
    for mesh_shape, _, m in _meshes(mesh_report):
        got = _no_error(m["collectives"])
        for key, (shape, global_shape, placements) in _expected_collectives(mesh_shape).items():
            e = _no_error(got[key])
            assert (e["shape"], e["global_shape"], e["placements"]) == (shape, global_shape, placements), key
            assert e["download_shape"] == global_shape, key


def test_a_whole_mesh_all_gather_on_a_2d_mesh_needs_a_2d_fabric_in_ttnn_too(mesh_report):
    """SimMesh refuses it (tests/test_mesh.py) because ttnn does: this is ttnn saying so."""
    for (rows, cols), _, m in _meshes(mesh_report):
        if rows > 1 and cols > 1:
            assert "requires cluster_axis" in m["collectives"]["all_gather/all"]["error"]


def test_one_program_on_every_chip_and_a_program_per_chip(mesh_report):
    (rows, cols), _, m = _first(mesh_report)
    p = _no_error(m["programs"])
    assert p["spmd"]["dispatched"] and p["spmd"]["tiles_per_chip"] == 4
    assert p["spmd"]["download_shape"] == [64 * rows * cols, 64]
    assert p["per_chip"]["dispatched"] and len(p["per_chip"]["tiles"]) == rows * cols
    assert "a program for every chip" in p["partial"]
    assert "must list the same input and output tensors" in p["mismatched_tensors"]


def test_a_tensor_written_chip_by_chip_is_read_only_when_whole_then_chip_by_chip(mesh_report):
    (rows, cols), _, m = _first(mesh_report)
    n = rows * cols
    e = _no_error(m["shards"])
    assert "written for chips" in e["partial_read"] and f"but not [{n - 1}]" in e["partial_read"]
    assert e["shard_bytes"] == [2 * 3 * 2048] * n  # one chip's [64, 96] bf16 shard: 2 x 3 tiles
    assert e["shard_shapes"] == [[64, 96]] * n and e["global_shape"] == [64 * n, 96]
    assert f"chip {n} is outside the {n} chips" in e["chip_outside"]


def test_a_program_may_name_a_view_of_a_tensors_first_rows_but_not_of_another_width(mesh_report):
    _, _, m = _first(mesh_report)
    e = _no_error(m["shards"])
    assert e["view_program"] == {"dispatched": True, "pages": 2 * 3}
    assert "nor a view of the first rows of one" in e["other_width_view"]


def test_a_zeroed_allocation_goes_through_ttnn_zeros_on_every_chip(mesh_report):
    """The card's fresh allocations hold old DRAM data (the capability says so), so the device stack asks for
    zeros where it relies on them: ttnn.zeros on the mesh, accepted with the tile layout the program builders
    expect (6 bf16 tiles a chip for [64, 96]) and the placements asked for. The mock reads zeros whatever the
    data, so the values are recorded, not a proof of the fill."""
    (rows, cols), _, m = _first(mesh_report)
    shards = _no_error(m["shards"])
    assert shards["zeroes_allocations"] is False
    z = shards["zeroed"]
    assert z["pages"] == 6 and z["shape"] == [64, 96] and z["global_shape"] == [64 * rows * cols, 96]
    assert z["values"] == [0.0]
