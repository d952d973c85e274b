"""Modeled time of host <-> device transfers over a Wormhole card's PCIe link (constants: hw.py, "the host link";
sources: docs/TIMING.md, "Host link").

A HostTransfer is one kind of traffic the device stack moves (DeviceStack.traffic's kinds): its bytes, the page
size of the device buffer they come from or go to, and how many calls move them. Its time is calls x the fixed
time of one call plus bytes / the link's rate at that page size and direction; the fixed time is kept for a
non-blocking call too (the measured figure is one call's command and completion round trip, which a call on a
second command queue still makes; it is only no longer the host's to wait for).

Whether that time hides behind device work is HostLinkTimeline's: the device's programs (command queue 0) and
the host link (transfers on command queue 1, tt-metal's two-command-queue pattern) as two resources. A transfer
starts when the programs it is ordered after are done and the link is free, and runs beside later programs;
the device waits only where the data is needed (bench/ttft.py says where the engine's are).

On a mesh of n300 cards each card's PCIe link carries its two chips' traffic: the first chip's own and the
second's, which then crosses the first's Ethernet on the link reserved for dispatch. A card's time is the larger
of its PCIe time (both chips' bytes) and the second chip's bytes over that Ethernet link; the cards' links run
in parallel. A transfer of each chip's copy or share is moved per chip; a gathered one (the logits row, gathered
on the device first) once, through the first chip.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill import hw

DIRECTIONS = ("down", "up")  # host to device, device to host


@dataclass(frozen=True)
class HostTransfer:
    kind: str  # DeviceStack.traffic's kind: "embeddings", "logits", "gdn_checkpoint"
    direction: str  # "down" or "up"
    nbytes: int  # on a mesh: one chip's copy or share, or the gathered whole if `gathered`
    page_size: int  # bytes per page of the device buffer
    calls: int = 1  # blocking transfer calls, each paying the fixed time of one
    gathered: bool = False  # on a mesh: moved once, through the first chip

    def __post_init__(self):
        if self.direction not in DIRECTIONS:
            raise ValueError(f"transfer direction {self.direction!r}: choose one of {', '.join(DIRECTIONS)}")
        if self.nbytes < 0 or self.page_size <= 0 or self.calls < 0:
            raise ValueError(f"transfer {self.kind}: bytes {self.nbytes}, page size {self.page_size} and calls "
                             f"{self.calls} must be non-negative (page size positive)")


def _check_costs(costs: str) -> None:
    if costs not in hw.PCIE_RATE_SHARE_BY_SETTING:
        raise ValueError(f"unknown cost setting {costs!r}; choose one of {', '.join(hw.PCIE_RATE_SHARE_BY_SETTING)}")


def pcie_bytes_per_s(direction: str, page_size: int, costs: str = "central") -> float:
    """The link's rate for pages of `page_size` bytes: the measured points, linear between them, flat outside."""
    _check_costs(costs)
    table = hw.PCIE_H2D_BYTES_PER_S_BY_PAGE if direction == "down" else hw.PCIE_D2H_BYTES_PER_S_BY_PAGE
    if page_size <= table[0][0]:
        rate = table[0][1]
    elif page_size >= table[-1][0]:
        rate = table[-1][1]
    else:
        for (p0, r0), (p1, r1) in zip(table, table[1:]):
            if p0 <= page_size <= p1:
                rate = r0 + (r1 - r0) * (page_size - p0) / (p1 - p0)
                break
    return rate * hw.PCIE_RATE_SHARE_BY_SETTING[costs]


def call_seconds(direction: str, costs: str = "central") -> float:
    """The fixed time of one blocking transfer call."""
    _check_costs(costs)
    fixed = hw.PCIE_H2D_CALL_S if direction == "down" else hw.PCIE_D2H_CALL_S
    return fixed * hw.PCIE_CALL_SHARE_BY_SETTING[costs]


def chips_per_link(chips: int) -> int:
    """Chips behind one PCIe link: 1 on one chip (an n150, or an n300 used as one chip), 2 on a mesh of n300s."""
    if chips == 1:
        return 1
    if chips % hw.CHIPS_PER_PCIE_LINK_N300:
        raise ValueError(f"a mesh of {chips} chips is not made of n300 cards ({hw.CHIPS_PER_PCIE_LINK_N300} chips "
                         "each, one PCIe link a card): give an even number of chips")
    return hw.CHIPS_PER_PCIE_LINK_N300


def transfer_seconds(t: HostTransfer, costs: str = "central", chips: int = 1) -> float:
    """One transfer's modeled time on the busiest (every, by symmetry) PCIe link of `chips` chips."""
    behind = chips_per_link(chips)
    if t.gathered:  # the whole moves once, from or to the first chip: no Ethernet leg
        return t.calls * call_seconds(t.direction, costs) + t.nbytes * chips / pcie_bytes_per_s(
            t.direction, t.page_size, costs)
    link_bytes = t.nbytes * behind
    remote_bytes = t.nbytes * (behind - 1)
    eth = hw.ETH_LINK_RAW_BYTES_PER_S * hw.ETH_PAYLOAD_EFFICIENCY_BY_SETTING[costs]
    moving = max(link_bytes / pcie_bytes_per_s(t.direction, t.page_size, costs), remote_bytes / eth)
    return t.calls * behind * call_seconds(t.direction, costs) + moving


def host_link_times(transfers, costs: str = "central", chips: int = 1) -> dict:
    """Seconds, bytes over one PCIe link and calls, in total and by kind and direction ("up gdn_checkpoint")."""
    behind = chips_per_link(chips)
    by_kind: dict[str, float] = {}
    bytes_by_kind: dict[str, int] = {}
    calls = 0
    for t in transfers:
        key = f"{t.direction} {t.kind}"
        by_kind[key] = by_kind.get(key, 0.0) + transfer_seconds(t, costs, chips)
        link = t.nbytes * (chips if t.gathered else behind)
        bytes_by_kind[key] = bytes_by_kind.get(key, 0) + link
        calls += t.calls * (1 if t.gathered else behind)
    return {"seconds": sum(by_kind.values()), "seconds_by_kind": by_kind,
            "link_bytes_by_kind": bytes_by_kind, "calls": calls, "chips_per_link": behind, "costs": costs}


class HostLinkTimeline:
    """The device's programs and the host link as two resources, in the order the device stack issues work.

    compute(s): programs (and collectives) run for s on the device, in order. issue(t): a transfer ordered after
    everything computed so far (an event recorded on the programs' queue, waited for on the transfer queue)
    starts when that is done and the link has finished the transfers before it, and runs beside later programs;
    returns a handle. wait(handles): the device's next program (or the host, which then issues it) waits until
    those transfers are done; the wait is the exposed host time. Transfers share the one link in issue order.
    """

    def __init__(self, costs: str = "central", chips: int = 1):
        self.costs, self.chips = costs, chips
        self.device_s = 0.0  # when the device's last program ends (its clock)
        self.link_free_s = 0.0  # when the link's last transfer ends
        self.link_busy_s = 0.0
        self.exposed_s = 0.0  # device time spent waiting on transfers
        self.transfers: list[HostTransfer] = []
        self._ends: list[float] = []

    def compute(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"device work of {seconds} s: seconds must be non-negative")
        self.device_s += seconds

    def issue(self, t: HostTransfer) -> int:
        start = max(self.device_s, self.link_free_s)
        seconds = transfer_seconds(t, self.costs, self.chips)
        self.link_free_s = start + seconds
        self.link_busy_s += seconds
        self.transfers.append(t)
        self._ends.append(self.link_free_s)
        return len(self._ends) - 1

    def wait(self, handles) -> None:
        until = max((self._ends[h] for h in handles), default=0.0)
        if until > self.device_s:
            self.exposed_s += until - self.device_s
            self.device_s = until

    def blocking(self, t: HostTransfer) -> None:
        """A transfer the device waits for at once (nothing to overlap it with)."""
        self.wait([self.issue(t)])

    def finish(self) -> dict:
        """host_link_times of every transfer, with the link's busy seconds split into exposed and hidden (the
        time the device waited, and the rest), and the timeline's end (the device's clock after every wait)."""
        times = host_link_times(self.transfers, self.costs, self.chips)
        return {**times, "exposed_s": self.exposed_s, "hidden_s": self.link_busy_s - self.exposed_s,
                "end_s": self.device_s}
