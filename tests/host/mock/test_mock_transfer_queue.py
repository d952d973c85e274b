"""TTDevice's second command queue on ttnn's mock n150 and n300 (transfer_queue_driver.py): the device opens with
two queues, and the calls read_ahead / write_ahead make (ttnn.from_device non-blocking and
copy_host_to_device_tensor on queue 1, events recorded and waited for on the host) are accepted around programs
on queue 0. The mock runs no kernel, so no data is checked; what is checked is that each call went through, the
shapes and bytes that came back, and that nothing was left in flight."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", params=["n150", "n300"])
def report(request, tmp_path_factory) -> dict:
    import mock_env

    cluster = request.param
    return mock_env.run_driver(tmp_path_factory.mktemp(f"mock-cq-{cluster}"), cluster, "transfer_queue_driver.py",
                               cluster)[1]


def test_every_call_on_the_transfer_queue_is_accepted(report):
    failed = {name: err for name, err in report["steps"].items() if err != "ok"}
    assert not failed, failed
    assert "raw_read_on_queue_1" in report["steps"]  # a one-queue device refuses this (cq_id 1 is out of range)


def test_a_write_ahead_is_waited_for_by_the_first_program_that_reads_it(report):
    assert report["writes_in_flight_before_run"] == 1 and report["writes_in_flight_after_run"] == 0


def test_a_read_ahead_lands_whole_and_is_dropped_when_overwritten_or_freed(report):
    assert report["landed_shape"] == [64, 64]
    assert report["landed_bytes"] == 4 * 2048  # 64 x 64: four bf16 tiles of 2 KB
    assert report["reads_kept_after_overwrite"] == 0 and report["reads_kept_after_free"] == 0
    if report["cluster"] == "n300":
        assert report["shards"] == [[64, 64], [64, 64]] and report["shard_page_bytes"] == 2048
