"""Representative programs of every kernel family, for the checks against the real ttnn.

A program builder module registers a zero-argument function per test shape that builds its
Program. Its tensors come from ttprefill.device.offline_device.OfflineDevice, which lays tensors
out in DRAM like the simulator but holds no data and needs neither the simulator extension nor a
card, so the registry works in .venv-tt. tests/host build the real ttnn descriptors for each and
check them (ttprefill.device.ttnn_checks). Keep the functions cheap: no kernel runs, no compilation.

    @register("flash_attention/seq256_d128")
    def _fa_small() -> Program: ...
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from ttprefill.device.program import Program

TEST_PROGRAMS: dict[str, Callable[[], Program]] = {}
_build_device: list[object] = []  # innermost `building_on` device last


def build_device():
    """The device registered builders allocate their tensors on: an OfflineDevice, unless a caller
    runs them on a real backend inside `building_on(device)` (the mock-cluster tier does, so the
    programs carry that device's real addresses and NoC coordinates)."""
    if _build_device:
        return _build_device[-1]
    from ttprefill.device.offline_device import OfflineDevice

    return OfflineDevice()


@contextmanager
def building_on(device) -> Iterator[None]:
    _build_device.append(device)
    try:
        yield
    finally:
        _build_device.pop()


def register(name: str) -> Callable[[Callable[[], Program]], Callable[[], Program]]:
    """Add a builder of a representative Program under a unique name."""

    def add(build: Callable[[], Program]) -> Callable[[], Program]:
        if name in TEST_PROGRAMS:
            raise ValueError(f"test program {name!r} registered twice")
        TEST_PROGRAMS[name] = build
        return build

    return add


def discover() -> dict[str, Callable[[], Program]]:
    """Import every module of ttprefill.ops, and the `registered` module of every op package (an
    ops/<family>/ package keeps its @register lines there), and return the registry."""
    import importlib
    import importlib.util
    import pkgutil

    import ttprefill.ops as ops

    for module in pkgutil.iter_modules(ops.__path__):
        if module.name == "registry":
            continue
        importlib.import_module(f"ttprefill.ops.{module.name}")
        registered = f"ttprefill.ops.{module.name}.registered"
        if module.ispkg and importlib.util.find_spec(registered) is not None:
            importlib.import_module(registered)
    return TEST_PROGRAMS
