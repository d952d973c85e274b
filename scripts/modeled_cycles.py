"""Print the modeled cycles of the benchmarked programs as one JSON object, so a refactor can show it
changed no program: run before and after, and diff the two files.

    .venv/bin/python scripts/modeled_cycles.py > before.json

Figures are MODELED by the simulator's timing model (timing-only runs at the default cost setting).
The benches go through the `ttprefill bench` command line, which stays stable across refactors; the
registered programs are every program of ttprefill/ops/registry.py, run on the simulator."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BENCHES = {
    "attention_d256_8k": ["attention", "--seq", "8192", "--q-heads", "24", "--kv-heads", "4", "--head-dim", "256",
                          "--fidelity", "HiFi2"],
    "attention_d128_8k": ["attention", "--seq", "8192", "--q-heads", "16", "--kv-heads", "4", "--head-dim", "128",
                          "--fidelity", "HiFi2"],
    "gdn_8k": ["gdn", "--seq", "8192", "--qk-heads", "16", "--v-heads", "48", "--key-dim", "128",
               "--value-dim", "128"],
    "matmul_1024_bf16": ["matmul", "--size", "1024", "--format", "bf16", "--fidelity", "HiFi2"],
}


def bench_cycles(name: str) -> int:
    cmd = [sys.executable, "-m", "ttprefill", "bench", *BENCHES[name], "--timing-only", "--json"]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["modeled_cycles"]


def registered_cycles(families: list[str] | None) -> dict[str, int]:
    """Cycles of every registered program, or of the programs of the named op families only (their
    modules imported one by one, so a family being written elsewhere cannot stop the others)."""
    import importlib

    from ttprefill.device.sim_device import SimDevice
    from ttprefill.ops.registry import TEST_PROGRAMS, building_on, discover

    if families:
        for family in families:
            importlib.import_module(f"ttprefill.ops.{family}")
            try:
                importlib.import_module(f"ttprefill.ops.{family}.registered")
            except ModuleNotFoundError:
                pass
        programs = dict(TEST_PROGRAMS)
    else:
        programs = discover()
    out = {}
    for name, build in sorted(programs.items()):
        device = SimDevice(timing_only=True)
        with building_on(device):
            program = build()
        out[name] = device.run(program).cycles
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["benches", "registered"], default=None)
    parser.add_argument("--families", default=None,
                        help="comma-separated op families of the registered programs (default: all)")
    args = parser.parse_args(argv)
    result: dict = {"unit": "modeled cycles"}
    if args.only != "registered":
        result["benches"] = {name: bench_cycles(name) for name in BENCHES}
    if args.only != "benches":
        result["registered"] = registered_cycles(args.families.split(",") if args.families else None)
    print(json.dumps(result, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
