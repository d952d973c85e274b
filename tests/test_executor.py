"""The executor boundary: capabilities instead of backend names, one RunReport, host traffic counted by
direction, tensors kept resident until released."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill.device.backends import BACKENDS, backend_info, open_device
from ttprefill.device.executor import TO_DEVICE, TO_HOST, Executor, HostTraffic, RunReport
from ttprefill.device.offline_device import OfflineDevice
from ttprefill.device.program import DataFormat
from ttprefill.device.resident import ResidentTensors
from ttprefill.device.sim_device import SimDevice
from ttprefill.hw import CLOCK_HZ


def test_backends_state_their_capabilities_and_the_opened_device_agrees():
    assert set(BACKENDS) == {"sim", "tt"}
    sim = open_device("sim")
    assert isinstance(sim, Executor)
    assert sim.capabilities.models_time == backend_info("sim").models_time is True
    assert sim.capabilities.holds_data and not sim.capabilities.has_mesh
    assert backend_info("tt").mesh and not backend_info("tt").models_time
    assert not OfflineDevice().capabilities.holds_data


def test_a_backend_without_a_mesh_refuses_a_mesh_shape(monkeypatch):
    from ttprefill.device.backends import Backend

    one_chip = Backend("one", "ttprefill.device.sim_device", "SimDevice", models_time=True, mesh=False,
                       description="a one-chip backend")
    monkeypatch.setitem(BACKENDS, "one", one_chip)
    with pytest.raises(ValueError, match="runs one chip"):
        open_device("one", mesh_shape=(1, 2))


def test_run_reports_combine_cycles_counters_and_keep_each_program():
    a = RunReport("a", 0.5, 1000, counters={"noc_bytes": 10, "label": "x"})
    b = RunReport("b", 0.25, 3000, counters={"noc_bytes": 5})
    both = RunReport.combine([a, b], "ab")
    assert both.cycles == 4000 and both.wall_s == 0.75 and both.counters == {"noc_bytes": 15}
    assert both.programs == [("a", 1000), ("b", 3000)]
    assert both.modeled_s == 4000 / CLOCK_HZ
    wall_only = RunReport.combine([a, RunReport("card", 0.1)])
    assert wall_only.cycles is None and wall_only.modeled_s is None and not wall_only.modeled


def test_host_traffic_counts_the_bytes_that_cross():
    dev = SimDevice()
    x = (np.arange(64 * 96) % 200).astype(np.float32).reshape(64, 96)  # exact in bf16
    t = dev.upload(x, DataFormat.Float16_b)
    assert dev.host_traffic.total(TO_DEVICE) == 6 * 2048  # six bf16 tiles of 32x32
    np.testing.assert_array_equal(dev.download(t), x)
    assert dev.host_traffic.as_dict() == {TO_DEVICE: {"write": 6 * 2048}, TO_HOST: {"read": 6 * 2048}}
    dev.host_traffic.reset()
    assert dev.host_traffic.total(TO_DEVICE) == dev.host_traffic.total(TO_HOST) == 0
    with pytest.raises(ValueError, match="unknown direction"):
        HostTraffic().add("sideways", "write", 1)


def test_a_resident_tensor_crosses_once_and_stays_until_released():
    dev = SimDevice()
    held = ResidentTensors(dev)
    w = np.ones((32, 64), np.float32)
    first = held.upload("w", w, DataFormat.Float32)
    again = held.upload("w", w, DataFormat.Float32)
    assert again is first and "w" in held and held.nbytes == 2 * 4096
    assert dev.host_traffic.total(TO_DEVICE) == 2 * 4096  # uploaded once
    with pytest.raises(ValueError, match="release it first"):
        held.upload("w", np.ones((32, 32), np.float32), DataFormat.Float32)
    in_use = dev.dram_bytes_in_use()
    held.release_all()
    assert first.freed and "w" not in held and dev.dram_bytes_in_use() < in_use
    with pytest.raises(KeyError, match="no resident tensor 'w'"):
        held["w"]
