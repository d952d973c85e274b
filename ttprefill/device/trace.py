"""Export a simulated run's spans in the Chrome / Perfetto trace format (chrome://tracing, ui.perfetto.dev).

One process per core, one thread per RISC role; timestamps are modeled cycles shown as microseconds
at 1 GHz divided by 1000 (1 us on the time axis = 1,000 modeled cycles)."""

from __future__ import annotations

import json
from pathlib import Path

ROLE_TID = {"riscv_1": 1, "compute": 2, "riscv_0": 3}


def chrome_trace(report) -> dict:
    events = []
    cores = sorted({(x, y) for x, y, *_ in report.trace})
    pid_of = {c: i for i, c in enumerate(cores)}
    for (x, y), pid in pid_of.items():
        events.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"core ({x},{y})"}})
        for role, tid in ROLE_TID.items():
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": role}})
    for x, y, role, name, start, end in report.trace:
        events.append({"ph": "X", "name": name, "pid": pid_of[(x, y)], "tid": ROLE_TID.get(role, 0),
                       "ts": start / 1000.0, "dur": (end - start) / 1000.0,
                       "cat": "wait" if "wait" in name or "barrier" in name else "work"})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"program": report.program, "modeled_cycles": report.cycles,
                          "note": "modeled Wormhole timeline from the ttprefill simulator, not a measurement"}}


def write_chrome_trace(report, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(chrome_trace(report)))
    return path
