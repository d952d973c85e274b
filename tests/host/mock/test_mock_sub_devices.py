"""TTDevice's sub-devices on ttnn's mock n300 (sub_devices_driver.py): what the device stack's micro-batches ask of
a card (device/tt_device.py open_sub_devices; model/interleave.py). The mock executes no kernel: these check
that ttnn accepts the calls. What 0.81.1's mock does not do is checked too, so that a wheel that does it shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ttprefill.device.tt_device import sub_device_core_ranges

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DRIVER_TIMEOUT_S = 600
SIGSEGV = -11


def test_the_grid_splits_row_by_row_by_hand():
    # 54 cores: rows 0-5 whole and the first 6 of row 6; the collectives the last 2 of row 6 and row 7
    assert sub_device_core_ranges(54) == ([(0, 0, 7, 5), (0, 6, 5, 6)], [(6, 6, 7, 6), (0, 7, 7, 7)])
    assert sub_device_core_ranges(48) == ([(0, 0, 7, 5)], [(0, 6, 7, 7)])
    with pytest.raises(ValueError, match="leaves no cores"):
        sub_device_core_ranges(64)


def _run(tmp_path, step: str):
    import mock_env

    env = mock_env.build(tmp_path, "n300")
    environ = env.environ()
    environ["PYTHONPATH"] = os.pathsep.join([str(REPO), str(HERE), environ.get("PYTHONPATH", "")])
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, str(HERE / "sub_devices_driver.py"), step, str(out)], env=environ,
                          capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S)
    return proc, (json.loads(out.read_text()) if out.exists() else None)


def test_the_mock_n300_accepts_the_sub_device_calls(tmp_path):
    proc, report = _run(tmp_path, "accept")
    assert proc.returncode == 0 and report is not None, proc.stderr[-6000:]
    assert report["mock"] is True
    for step in ("manager_made_and_removed", "record_event", "synchronize_sub_device"):
        assert report[step] == "ok", report[step]
    assert report["all_gather"] == [128, 256]  # each chip's 64 rows gathered over the two chips
    assert report["reduce_scatter"] == [32, 256]  # each chip its half of the sum
    assert report["program"] == "copy_16"  # each chip's [64, 256]: 2 x 8 tiles


def test_open_sub_devices_on_the_mock_is_refused_naming_why(tmp_path):
    proc, report = _run(tmp_path, "refuse")
    assert proc.returncode == 0 and report is not None, proc.stderr[-6000:]
    error = report["open_sub_devices"]["error"]
    assert error.startswith("TTDeviceUnavailable") and "load_sub_device_manager" in error and "--backend sim" in error


def test_the_mock_n300_crashes_loading_a_sub_device_manager(tmp_path):
    """ttnn 0.81.1's mock segfaults in load_sub_device_manager (reset_worker_dispatch_state_on_device writes to the
    workers), so the loaded path (programs and collectives on their sub-devices, waited for by events) cannot be
    dispatched on the mock. If this fails because the load worked, drop TTDevice's refusal on a mock and extend the
    driver to run a prefill there."""
    proc, report = _run(tmp_path, "load")
    assert report is None and proc.returncode == SIGSEGV, (proc.returncode, proc.stdout[-2000:])
    assert "loading" in proc.stdout and "load_sub_device_manager" in proc.stderr
