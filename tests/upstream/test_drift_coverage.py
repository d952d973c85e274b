"""`ttprefill drift` reports upstream coverage and the conformance registry's pass count: the figures come
from ttprefill.upstream_coverage and ttprefill.ops.upstream.registry, whichever interpreter drift runs in."""

from __future__ import annotations

import json

import pytest

from ttprefill import drift, upstream_coverage
from ttprefill.ops.upstream import registry


@pytest.fixture
def fake_registry(monkeypatch):
    """Two entries of known outcome in place of the real ones."""
    def good(device):
        return {"pcc": 1.0}

    def bad(device):
        raise registry.ConformanceError("o: pcc 0.5 (need >= 0.999)")

    programs = {"fake/good": registry.UpstreamProgram("fake/good", "transformer", (), good),
                "fake/bad": registry.UpstreamProgram("fake/bad", "normalization", (), bad)}
    monkeypatch.setattr(registry, "discover", lambda: programs)
    return programs


def test_program_count_is_the_registry_run_here(fake_registry, monkeypatch):
    monkeypatch.setattr(drift, "_has_simulator", lambda: True)
    out = drift.upstream_programs_summary(True)
    assert (out["upstream_programs"], out["upstream_programs_passed"]) == (2, 1)
    failed = [r for r in out["upstream_program_results"] if not r["passed"]]
    assert [r["name"] for r in failed] == ["fake/bad"] and "ConformanceError" in failed[0]["error"]


def test_run_program_turns_any_exception_into_a_failed_outcome(fake_registry):
    outcome = registry.run_program("fake/bad", device=object())
    assert not outcome.passed and "pcc 0.5" in outcome.error
    assert registry.run_program("fake/good", device=object()).passed


def test_without_simulator_or_venv_the_count_is_reported_as_not_run(fake_registry, monkeypatch, tmp_path):
    monkeypatch.setattr(drift, "_has_simulator", lambda: False)
    out = drift.upstream_programs_summary(True, repo=tmp_path)
    assert out["upstream_programs"] == 2 and out["upstream_programs_passed"] is None
    assert "not run" in out["upstream_programs_note"] and ".venv" in out["upstream_programs_note"]


def test_without_simulator_the_registry_runs_in_the_repos_venv(monkeypatch):
    # The interpreter drift runs in within CI (.venv-tt) has no simulator; here we pretend the same.
    monkeypatch.setattr(drift, "_has_simulator", lambda: False)
    out = drift.upstream_programs_summary(True)
    assert out["upstream_programs_run_in"].endswith(".venv/bin/python")
    assert sorted(r["name"] for r in out["upstream_program_results"]) == sorted(registry.discover())
    assert out["upstream_programs_passed"] == sum(r["passed"] for r in out["upstream_program_results"])


def test_coverage_summary_is_the_coverage_report(monkeypatch):
    full = upstream_coverage.report
    monkeypatch.setattr(upstream_coverage, "report", lambda: full(("transformer",)))
    summary = drift.upstream_coverage_summary()
    report = full(("transformer",))  # cached by content hash: the same compile results
    assert summary["upstream_kernel_files"] == report["upstream_kernel_files"] == 37
    assert summary["upstream_compiling"] == report["upstream_compiling"]
    # A floor, not the figure: what compiles today (sdpa prefill, joint and decode compute with their
    # factories' defines) must keep compiling; ring-joint/sparse sdpa and the GDN prep reader do not yet.
    assert report["upstream_compiling"] >= 26
    assert summary["upstream_coverage"]["by_family"] == report["by_family"]
    assert list(summary["upstream_coverage"]["top_missing_headers"]) == list(report["missing_headers"])[:10]


def test_json_report_carries_the_upstream_keys_and_the_table_its_section(monkeypatch, capsys):
    monkeypatch.setattr(drift, "upstream_coverage_summary", lambda: {
        "upstream_kernel_files": 519, "upstream_compiling": 7,
        "upstream_coverage": {"by_family": {"transformer": {"files": 37, "compiling": 2}},
                              "top_missing_headers": {"api/x.h": 3}, "top_missing_symbols": {"foo": 2}, "wall_s": 0.1}})
    monkeypatch.setattr(drift, "upstream_programs_summary", lambda run, repo=None: {
        "upstream_programs": 5, "upstream_programs_passed": 1, "upstream_programs_run_in": "x",
        "upstream_programs_note": "ran", "upstream_program_results": [
            {"name": "sdpa/a", "family": "transformer", "passed": False, "error": "f.cpp:1:2: error: 'x' was not declared",
             "wall_s": 0.0}]})
    drift.main(["--json", "--no-syntax"])
    report = json.loads(capsys.readouterr().out)
    assert {k: report[k] for k in ("upstream_kernel_files", "upstream_compiling", "upstream_programs",
                                   "upstream_programs_passed")} == {"upstream_kernel_files": 519, "upstream_compiling": 7,
                                                                    "upstream_programs": 5, "upstream_programs_passed": 1}
    table = "\n".join(drift.format_upstream(report))
    assert "7 of 519" in table and "transformer 2/37" in table and "api/x.h (3)" in table
    assert "1 of 5 pass" in table and "sdpa/a: f.cpp:1:2: error: 'x' was not declared" in table


# ------------------------------------------------------------------ the factories' defines and args

def test_every_factory_entry_names_its_factory_and_matches_a_wheel_kernel():
    root = upstream_coverage.operations_root()
    kernels = [str(p.relative_to(root)) for p in upstream_coverage.kernel_files()]
    for pattern, args in upstream_coverage.FACTORY_ARGS:
        assert args.factory.strip(), pattern
        assert any(upstream_coverage.fnmatch.fnmatchcase(k, pattern) for k in kernels), f"{pattern} matches no kernel"


def test_factory_entries_apply_in_table_order():
    found = upstream_coverage.factory_args_for("eltwise/binary_ng/device/kernels/compute/eltwise_binary_sfpu.cpp")
    defines = {}
    for f in found:
        defines.update(f.defines)
    assert defines["BINARY_SFPU_OP"] == "add_binary_tile" and defines["BINARY_OP_TYPE"] == "EltwiseBinaryType::ELWADD"
    assert defines["PROCESS_LHS_ACTIVATIONS(i)"] == "" and defines["BCAST_INPUT"] == "1"
    assert upstream_coverage.factory_args_for("eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp") == []


# A kernel of each kind the table serves: defines (binary_ng, ternary, reduce, bcast), leading compile-time
# CB indices (tilize) and the compute config (gelu backward keeps six DEST tiles only without fp32 DEST).
FACTORY_SERVED = ["eltwise/binary_ng/device/kernels/compute/eltwise_binary.cpp",
                  "eltwise/ternary/device/kernels/compute/ternary_sfpu_no_bcast_ttt.cpp",
                  "reduction/generic/device/kernels/compute/reduce.cpp",
                  "data_movement/bcast/device/kernels/compute/bcast_h.cpp",
                  "data_movement/tilize/device/kernels/compute/tilize.cpp",
                  "eltwise/unary_backward/device/kernels/compute/eltwise_bw_gelu_tanh.cpp"]


@pytest.mark.parametrize("relative", FACTORY_SERVED)
def test_kernels_compile_with_what_their_factory_passes_and_not_without(relative, monkeypatch):
    from ttprefill.device import jit, ttnn_env

    path = upstream_coverage.operations_root() / relative
    package, cache = ttnn_env.package_root(), jit.cache_dir() / "upstream-coverage"
    cache.mkdir(parents=True, exist_ok=True)
    served = upstream_coverage._check(path, package, cache)
    assert served.ok, served.first_error
    assert served.args_from.startswith("placeholders + ")
    monkeypatch.setattr(upstream_coverage, "FACTORY_ARGS", ())
    bare = upstream_coverage._check(path, package, cache)
    assert not bare.ok and bare.args_from == "placeholders"
