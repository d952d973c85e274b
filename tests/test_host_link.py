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
