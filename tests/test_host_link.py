"""The PCIe host-link model (device/host_link.py) against hand arithmetic from the measured points in hw.py:
bytes / rate at the page size plus a fixed time per blocking call, and on a mesh of n300s two chips per link."""

from __future__ import annotations

import pytest

from ttprefill import hw
from ttprefill.device.host_link import HostTransfer, host_link_times, pcie_bytes_per_s, transfer_seconds

MB = 1_000_000


def test_rates_are_the_measured_points_and_lie_between_them():
    assert pcie_bytes_per_s("up", 4096) == 11.462e9 and pcie_bytes_per_s("down", 2048) == 15.071e9
    # halfway between 2 KiB and 4 KiB pages, halfway between their rates
    assert pcie_bytes_per_s("up", 3072) == pytest.approx((9.427e9 + 11.462e9) / 2)
    assert pcie_bytes_per_s("up", 512) == 7.809e9 and pcie_bytes_per_s("up", 65536) == 12.177e9  # flat outside
    # the high cost setting halves the link, low and central are the measurement
    assert pcie_bytes_per_s("up", 4096, "high") == pytest.approx(11.462e9 / 2)
    assert pcie_bytes_per_s("up", 4096, "low") == 11.462e9


def test_one_chip_transfer_is_calls_plus_bytes_over_rate():
    t = HostTransfer("gdn_checkpoint", "up", 53 * MB, 4096, calls=24)
    assert transfer_seconds(t) == pytest.approx(24 * 59.5e-6 + 53e6 / 11.462e9)
    assert transfer_seconds(t, "low") == pytest.approx(24 * 59.5e-6 / 2 + 53e6 / 11.462e9)
    assert transfer_seconds(t, "high") == pytest.approx(24 * 59.5e-6 + 53e6 / (11.462e9 / 2))
    down = HostTransfer("embeddings", "down", 16 * MB, 2048)
    assert transfer_seconds(down) == pytest.approx(119.4e-6 + 16e6 / 15.071e9)


def test_n300_link_carries_both_chips_and_the_gathered_row_once():
    share = HostTransfer("gdn_checkpoint", "up", 26 * MB, 4096, calls=24)  # one chip's half of a state
    # both chips' shares over chip 0's PCIe (52 MB); chip 1's 26 MB over one Ethernet link at 0.95 of 12.5 GB/s
    # takes 2.19 ms, less than the PCIe's 4.54 ms, so the PCIe sets the time; each chip's reads are its own calls
    assert transfer_seconds(share, chips=2) == pytest.approx(48 * 59.5e-6 + 52e6 / 11.462e9)
    row = HostTransfer("logits", "up", 64 * 1024, 2048, gathered=True)  # one chip's part of the gathered row
    assert transfer_seconds(row, chips=2) == pytest.approx(59.5e-6 + 2 * 64 * 1024 / 9.427e9)
    # a T3000 (8 chips, 4 n300 cards): each card's link still carries two chips
    assert transfer_seconds(share, chips=8) == pytest.approx(transfer_seconds(share, chips=2))
    times = host_link_times([share, row], chips=2)
    assert times["chips_per_link"] == 2 and times["calls"] == 48 + 1
    assert times["link_bytes_by_kind"] == {"up gdn_checkpoint": 52 * MB, "up logits": 2 * 64 * 1024}
    assert times["seconds"] == pytest.approx(sum(times["seconds_by_kind"].values()))


def test_ethernet_bounds_the_second_chip_when_the_pcie_is_faster():
    """100 MB a chip down on an n300: 200 MB over chip 0's PCIe (13.3 ms at 15.07 GB/s) against chip 1's 100 MB
    over one Ethernet link (8.4 ms at 0.95 of 12.5 GB/s). The Ethernet would bind only for a PCIe rate above twice
    the link's, which no measured point reaches; it stays a lower bound."""
    t = HostTransfer("embeddings", "down", 100 * MB, 2048, calls=0)
    eth = hw.ETH_LINK_RAW_BYTES_PER_S * hw.ETH_PAYLOAD_EFFICIENCY_BY_SETTING["central"]
    assert transfer_seconds(t, chips=2) >= 100e6 / eth
    assert transfer_seconds(t, chips=2) == pytest.approx(200e6 / 15.071e9)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="direction"):
        HostTransfer("embeddings", "sideways", 1, 2048)
    with pytest.raises(ValueError, match="cost setting"):
        pcie_bytes_per_s("up", 2048, "medium")
    with pytest.raises(ValueError, match="n300"):
        transfer_seconds(HostTransfer("embeddings", "down", 1, 2048), chips=3)


def test_timeline_runs_transfers_beside_programs_and_charges_only_the_waits():
    """Two 1 ms reads (11.462 MB of 4 KiB pages at 11.462 GB/s, plus a call's 59.5 us) issued after 0.5 ms of
    programs share the link one after the other (0.5 -> 1.5595 -> 2.619 ms) while the device runs on; the
    device waits for the first at 1.5 ms (0.0595 ms exposed), for the second after 2 ms more programs (3.5595 ms:
    done, nothing exposed), then for a blocking read it cannot overlap (1.0595 ms exposed)."""
    from ttprefill.device.host_link import HostLinkTimeline

    read = HostTransfer("gdn_checkpoint", "up", 11_462_000, 4096)
    one = 59.5e-6 + 1e-3
    tl = HostLinkTimeline()
    tl.compute(0.5e-3)
    first, second = tl.issue(read), tl.issue(read)
    tl.compute(1e-3)
    tl.wait([first])
    assert tl.device_s == pytest.approx(0.5e-3 + one) and tl.exposed_s == pytest.approx(0.5e-3 + one - 1.5e-3)
    tl.compute(2e-3)
    tl.wait([second])  # ended at 0.5 + 2 x 1.0595 = 2.619 ms, before the device's 3.5595 ms
    assert tl.device_s == pytest.approx(0.5e-3 + one + 2e-3)
    tl.blocking(read)
    out = tl.finish()
    assert out["seconds"] == pytest.approx(3 * one) and out["calls"] == 3
    assert out["exposed_s"] == pytest.approx(one - 1e-3 + one)
    assert out["hidden_s"] == pytest.approx(3 * one - out["exposed_s"])
    assert out["end_s"] == pytest.approx(2.5e-3 + 2 * one)


def test_timeline_on_an_n300_times_each_transfer_for_both_chips():
    from ttprefill.device.host_link import HostLinkTimeline

    share = HostTransfer("gdn_checkpoint", "up", 26 * MB, 4096, calls=1)
    tl = HostLinkTimeline(chips=2)
    tl.blocking(share)
    assert tl.finish()["exposed_s"] == pytest.approx(2 * 59.5e-6 + 52e6 / 11.462e9)
    with pytest.raises(ValueError, match="non-negative"):
        tl.compute(-1.0)
