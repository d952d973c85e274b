"""The executor interface every backend implements, the one RunReport they return, and the host
traffic they count.

An executor runs backend-neutral Programs (device/program.py) on tensors it holds in device DRAM. A
tensor uploaded or allocated stays on the device until it is freed: callers that keep a tensor across
runs (weights, caches, states) upload it once and pass it to every program that reads it
(device/resident.py keeps such tensors by name). Every byte that crosses between host and device is
counted by direction and by call (HostTraffic), so a caller can report how much it moved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from ttprefill.hw import CLOCK_HZ

from .program import CoreCoord, DataFormat, Program
from .tensor import DeviceTensor


@dataclass(frozen=True)
class Capabilities:
    """What an executor can do, so callers ask instead of testing backend names."""

    models_time: bool  # reports modeled cycles (the simulator's timing model)
    holds_data: bool  # tensors carry values (False: layout only, nothing can run)
    has_mesh: bool  # more than one chip runs each program
    mesh_shape: tuple[int, int] = (1, 1)
    # Fresh allocations read as zero (the simulator's rule). A card's hold whatever DRAM held before: a caller
    # that relies on rows no program writes being zero asks allocate_zeroed there.
    zeroes_allocations: bool = True
    # A second queue for host transfers beside the programs (read_ahead / write_ahead: a card's second command
    # queue). Without one (the simulator) a transfer happens when it is asked for.
    transfer_queue: bool = False


@dataclass
class RunReport:
    """What one run reports, whatever ran it. `cycles` are modeled (None when the executor does not
    model time); `wall_s` is the host's measured wall time. A report of several programs run back to
    back (RunReport.combine) keeps each one's name and cycles in `programs`."""

    program: str
    wall_s: float
    cycles: int | None = None
    cores: list = field(default_factory=list)
    counters: dict = field(default_factory=dict)
    jit_compiled: int = 0
    jit_cached: int = 0
    trace: list = field(default_factory=list)  # (core x, core y, role, name, start cycle, end cycle)
    # Profiler zones (DeviceZoneScopedN in a kernel), summed over cores: name -> entries, elapsed, and the
    # busy cycles of the unpack / math / pack pipelines and of data-movement RISC-Vs inside the zone.
    zones: dict = field(default_factory=dict)
    programs: list[tuple[str, int | None]] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def modeled(self) -> bool:
        return self.cycles is not None

    @property
    def modeled_s(self) -> float | None:
        return None if self.cycles is None else self.cycles / CLOCK_HZ

    @classmethod
    def combine(cls, reports: list["RunReport"], name: str = "combined") -> "RunReport":
        """Programs run back to back: wall times, cycles (when every one is modeled) and counters add up."""
        modeled = all(r.cycles is not None for r in reports)
        counters: dict = {}
        for r in reports:
            for key, value in r.counters.items():
                if isinstance(value, (int, float)):
                    counters[key] = counters.get(key, 0) + value
        return cls(name, sum(r.wall_s for r in reports), sum(r.cycles for r in reports) if modeled else None,
                   counters=counters, programs=[(r.program, r.cycles) for r in reports])


TO_DEVICE, TO_HOST = "to_device", "to_host"


class HostTraffic:
    """Bytes moved between host and device, by direction and by the call that moved them."""

    def __init__(self) -> None:
        self._bytes: dict[str, dict[str, int]] = {TO_DEVICE: {}, TO_HOST: {}}

    def add(self, direction: str, kind: str, nbytes: int) -> None:
        if direction not in self._bytes:
            raise ValueError(f"unknown direction {direction!r}; use {TO_DEVICE!r} or {TO_HOST!r}")
        by_kind = self._bytes[direction]
        by_kind[kind] = by_kind.get(kind, 0) + int(nbytes)

    def total(self, direction: str) -> int:
        return sum(self._bytes[direction].values())

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {d: dict(k) for d, k in self._bytes.items()}

    def reset(self) -> None:
        for by_kind in self._bytes.values():
            by_kind.clear()


@runtime_checkable
class Executor(Protocol):
    """A device that runs Programs: the simulator (SimDevice), a card (TTDevice)."""

    capabilities: Capabilities
    host_traffic: HostTraffic

    def allocate(self, shape: tuple[int, ...], data_format: DataFormat) -> DeviceTensor: ...

    def upload(self, array: np.ndarray, data_format: DataFormat) -> DeviceTensor: ...

    def write(self, tensor: DeviceTensor, array: np.ndarray) -> None: ...

    def download(self, tensor: DeviceTensor) -> np.ndarray: ...

    def free(self, tensor: DeviceTensor) -> None: ...

    def run(self, program: Program) -> RunReport: ...

    def worker_noc_coord(self, core: CoreCoord) -> tuple[int, int]: ...


def run_each(steps) -> None:
    """Runs every step even when one before it fails; the first error is raised after (teardown)."""
    first = None
    for step in steps:
        try:
            step()
        except BaseException as e:  # noqa: BLE001 - raised again below, after the other steps
            first = first or e
    if first is not None:
        raise first
