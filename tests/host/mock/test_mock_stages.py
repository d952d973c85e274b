"""TTDevice.stage_devices on ttnn's mock n150 and n300 (stages_driver.py): one one-chip TTDevice per chip, each over
a 1x1 submesh, driven through every call the device stack makes of a one-chip device. The mock runs no kernel and
reads give zeros, so what is checked is the host path: each call accepted, shapes and bytes, what ttnn's allocators
report, the parent refusing to run, and closing."""

from __future__ import annotations

import pytest

CHIPS = {"n150": 1, "n300": 2}
TILE_BYTES = 32 * 32 * 2  # one bf16 tile


@pytest.fixture(scope="module", params=sorted(CHIPS))
def report(request, tmp_path_factory) -> dict:
    import mock_env

    cluster = request.param
    return mock_env.run_driver(tmp_path_factory.mktemp(f"mock-stages-{cluster}"), cluster, "stages_driver.py",
                               cluster)[1]


def test_one_one_chip_stage_device_per_chip_in_row_major_order(report):
    chips = CHIPS[report["cluster"]]
    assert report["stages"] == chips and report["same_list_again"]
    assert report["mesh_shapes"] == [[1, 1]] * chips and report["submesh_shapes"] == [[1, 1]] * chips
    assert report["chips"] == [[c] for c in range(chips)]
    assert report["models_time"] == [False] * chips


def test_every_call_of_a_one_chip_device_runs_on_each_stage(report):
    for stage in report["per_stage"]:
        failed = {name: err for name, err in stage["steps"].items() if err != "ok"}
        assert not failed, failed
        assert len(stage["steps"]) == 11
        assert stage["program_cache_entries_added"] == 1  # the copy program, compiled and cached on this stage
        assert stage["download_shape"] == [64, 64] and stage["landed_shape"] == [64, 64]
        assert stage["read_pages_bytes"] == 2 * TILE_BYTES
        assert stage["transfers_kept_after_free"] == 0


def test_a_stage_allocates_on_its_own_chip_only(report):
    chips = CHIPS[report["cluster"]]
    # 64 x 64 bf16 is four tile pages spread over the DRAM banks: one page on the fullest bank, on stage 0 alone.
    assert report["dram_allocated_per_bank_while_stage_0_holds_a_tensor"] == [TILE_BYTES] + [0] * (chips - 1)
    assert report["dram_allocated_per_bank_after_free"] == [0] * chips
    # Each stage's allocator is its own: the first buffer of every stage is at the same address, on its own chip.
    assert len({s["first_address"] for s in report["per_stage"]}) == 1


def test_the_parent_runs_nothing_once_its_chips_are_handed_over(report):
    assert report["parent_upload"].startswith("TTDeviceClosed: this TTDevice handed its chips to its stage devices")


def test_closing_stages_then_the_parent_or_the_parent_alone_leaves_nothing_open(report):
    chips = CHIPS[report["cluster"]]
    assert report["stages_closed"] == [True] * chips and report["parent_open_after_stages_closed"]
    assert report["stage_upload_after_close"] == "TTDeviceClosed: this stage device was closed (its close())"
    assert report["reopened_stages_closed_with_parent"] == [True] * chips
    assert report["reopened_again"]
