"""The mock-cluster tier: runs the card path end to end on ttnn's mock n150 and n300 (see mock_env.py).

Each cluster runs once per session in a subprocess (driver.py); the tests check its report. The
tier's figures are printed at the end of the pytest run.
"""

from __future__ import annotations

import pytest

CLUSTERS = ("n150", "n300")
FIGURES: dict[str, dict] = {}


class MockRun:
    def __init__(self, env, report: dict):
        self.env = env
        self.report = report
        self.commands = env.compile_commands()


@pytest.fixture(scope="session", params=CLUSTERS)
def mock_run(request, tmp_path_factory) -> MockRun:
    import mock_env

    cluster = request.param
    run = MockRun(*mock_env.run_driver(tmp_path_factory.mktemp(f"mock-{cluster}"), cluster, "driver.py", cluster))
    FIGURES[cluster] = {"report": run.report, "compile_commands": len(run.commands)}
    return run


def pytest_terminal_summary(terminalreporter):
    if not FIGURES:
        return
    tr = terminalreporter
    tr.section("card path on ttnn's mock cluster")
    for cluster, fig in sorted(FIGURES.items()):
        r = fig["report"]
        programs = r["programs"]
        ok = [n for n, e in programs.items() if e.get("dispatched")]
        hits = sum(1 for e in programs.values() if e.get("cache_entries_added") == [1, 0])
        grids = ", ".join(f"chip {c}: {x}x{y}" for c, x, y in r["chip_grids"])
        tr.write_line(f"{cluster}: {len(ok)}/{len(programs)} registered programs dispatched through generic_op, "
                      f"{hits} program-cache hits on re-run, {fig['compile_commands']} compile commands recorded; "
                      f"grids {grids}; L1 allocator base {r['l1_base']} B, top {r['l1_top']} B; "
                      f"{r['total_s']:.1f} s")
        limit = r["l1_top"]
        tr.write_line(f"  L1 high-water mark per program (reserved base + circular buffers, fullest core) "
                      f"against the allocator's limit of {limit} B:")
        for name, e in sorted(programs.items()):
            if "cb_high_water" in e:
                tr.write_line(f"    {name:<58} {e['cb_high_water']:>9} B  {100 * e['cb_high_water'] / limit:5.1f}%"
                              + ("" if e.get("dispatched") else f"  NOT DISPATCHED: {e.get('error', '')[:120]}"))
