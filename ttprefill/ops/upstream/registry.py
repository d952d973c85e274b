"""The conformance programs: tt-metal's own kernels run on the simulator and checked against references
written independently of them (fp64 numpy/torch from the ops' definitions).

One list serves both consumers: tests/upstream runs every entry and asserts it passed, and `ttprefill
drift` runs the same entries to report how many pass, so the number drift prints is the number the
suite checks.

An entry is a name, the op family, the upstream kernel files it runs, and `check(device)`: it builds
the program with its module's builder, uploads inputs, runs, downloads, compares, and returns the
metrics it measured (raising ConformanceError when the numbers are off). `run_program` turns any
exception (a kernel that does not compile yet, a simulator error, a wrong number) into a failed Outcome
carrying the reason.

    python -m ttprefill.ops.upstream.registry [--json] [name ...]
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from ttprefill.reference.metrics import pcc, rel_rms



class ConformanceError(AssertionError):
    """An upstream program ran but its numbers do not match the reference."""


@dataclass(frozen=True)
class UpstreamProgram:
    name: str
    family: str
    kernels: tuple[str, ...]  # upstream kernel sources, relative to ttnn/cpp/ttnn/operations
    check: Callable[[object], dict]
    # device -> the Program alone (no data, no run): what upstream_coverage compiles these kernels with.
    build: Callable[[object], object] | None = None


@dataclass
class Outcome:
    name: str
    family: str
    passed: bool
    error: str = ""
    metrics: dict = field(default_factory=dict)
    wall_s: float = 0.0


PROGRAMS: dict[str, UpstreamProgram] = {}


def register(name: str, family: str, kernels: tuple[str, ...], build: Callable[[object], object] | None = None):
    """Decorator: add `check(device) -> metrics` as a conformance program; `build(device) -> Program`, if
    given, builds the same program without data (OfflineDevice will do)."""

    def add(check: Callable[[object], dict]) -> Callable[[object], dict]:
        if name in PROGRAMS:
            raise ValueError(f"upstream program {name!r} registered twice")
        PROGRAMS[name] = UpstreamProgram(name, family, tuple(kernels), check, build)
        return check

    return add


def discover() -> dict[str, UpstreamProgram]:
    """Import every module of ttprefill.ops.upstream (their @register lines run) and return the entries."""
    import pkgutil

    import ttprefill.ops.upstream as package

    for module in pkgutil.iter_modules(package.__path__):
        if module.name != "registry":
            importlib.import_module(f"ttprefill.ops.upstream.{module.name}")
    return PROGRAMS


def expect_close(reference, result, what: str, pcc_min: float, rel_max: float) -> dict:
    """Compare against the reference; raise ConformanceError naming the metric that missed."""
    p, r = pcc(reference, result), rel_rms(reference, result)
    if not (p >= pcc_min and r <= rel_max):
        raise ConformanceError(f"{what}: pcc {p:.6f} (need >= {pcc_min}), rel_rms {r:.3e} (need <= {rel_max})")
    return {f"{what}_pcc": round(p, 6), f"{what}_rel_rms": float(f"{r:.3e}")}


def run_program(name: str, device=None) -> Outcome:
    """Run one entry on `device` (a fresh SimDevice by default) and report pass or fail with the reason."""
    entry = discover()[name]
    t0 = time.perf_counter()
    try:
        if device is None:
            from ttprefill.device.sim_device import SimDevice

            device = SimDevice()
        metrics = entry.check(device)
        return Outcome(name, entry.family, True, "", metrics, round(time.perf_counter() - t0, 2))
    except Exception as e:  # the reason is the result: a compile error, a SimError, a wrong number
        message = f"{type(e).__name__}: {e}"
        return Outcome(name, entry.family, False, _shorten(message), {}, round(time.perf_counter() - t0, 2))


def _shorten(message: str, limit: int = 2000) -> str:
    """Compiler output can run to megabytes; keep the head, which names the first error."""
    return message if len(message) <= limit else message[:limit] + f" ... ({len(message) - limit} more characters)"


def headline(error: str) -> str:
    """The line of an error that says what went wrong: the compiler's first error, else the first line."""
    lines = error.splitlines()
    line = next((x.strip() for x in lines if " error: " in x or "fatal error:" in x), lines[0] if lines else "")
    return re.sub(r"^\S*?/ttnn/cpp/ttnn/operations/", "", line)


def run_all(names: list[str] | None = None) -> list[Outcome]:
    programs = discover()
    return [run_program(n) for n in (names or sorted(programs))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="run tt-metal's kernels on the simulator against the references")
    ap.add_argument("names", nargs="*", help="entries to run (default: all)")
    ap.add_argument("--json", action="store_true", help="print one JSON list of outcomes")
    args = ap.parse_args(argv)
    outcomes = run_all(args.names or None)
    if args.json:
        print(json.dumps([asdict(o) for o in outcomes]))
    else:
        for o in outcomes:
            status = "pass" if o.passed else "FAIL"
            print(f"{status}  {o.name}  ({o.wall_s:.1f} s)  {headline(o.error) if o.error else o.metrics}")
        print(f"{sum(o.passed for o in outcomes)} of {len(outcomes)} upstream programs pass")
    return 0 if all(o.passed for o in outcomes) else 1


if __name__ == "__main__":
    # Run through the importable module: the builder modules register into its PROGRAMS, not __main__'s.
    from ttprefill.ops.upstream.registry import main as _main

    sys.exit(_main())
