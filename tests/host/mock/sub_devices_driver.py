"""The card path's sub-devices (TTDevice.open_sub_devices, for the device stack's micro-batches) on ttnn's mock
n300, in a process of its own:

    python sub_devices_driver.py accept|refuse|load report.json

accept: the mesh opens with its fabric; the sub-device manager TTDevice builds (the programs' first 54 cores, the
collectives' last 10) is created and removed; ttnn's all_gather and reduce_scatter take a `subdevice_id`, and
record_event / synchronize_device take `sub_device_ids` (the default sub-device 0: no manager is loaded); a program
runs on the compute cores. refuse: TTDevice.open_sub_devices on the mock (refused, naming why). load: ttnn's own
load of that manager (ttnn 0.81.1's mock crashes there). The report holds what each step did or the error it raised.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import numpy as np
from mesh_driver import BF16, _copy_program

from ttprefill.device.mesh_placement import shard_placements
from ttprefill.device.tt_device import PROGRAM_QUEUE, TTDevice
from ttprefill.device.ttnn_env import import_ttnn

COMPUTE_CORES = 54  # sub_device_timing.compute_sub_device_cores() at one link, written out


def _step(report: dict, name: str, fn):
    try:
        report[name] = fn()
    except Exception as e:  # recorded, so the tests name what failed
        report[name] = {"error": f"{type(e).__name__}: {e}"[:2000], "traceback": traceback.format_exc()[-4000:]}


def accept(dev: TTDevice, report: dict) -> None:
    ttnn = import_ttnn()
    _step(report, "manager_made_and_removed", lambda: dev.open_sub_devices(COMPUTE_CORES, load=False) or "ok")
    src = dev.upload(np.zeros((64 * dev.num_chips, 256), np.float32), BF16, shard_placements(0))
    default = ttnn.SubDeviceId(0)
    queue = ttnn.QueueId(PROGRAM_QUEUE)
    _step(report, "all_gather", lambda: list(ttnn.all_gather(src.ttnn_tensor, 0, cluster_axis=1, subdevice_id=default,
                                                              memory_config=ttnn.DRAM_MEMORY_CONFIG).shape))
    _step(report, "reduce_scatter", lambda: list(ttnn.reduce_scatter(
        src.ttnn_tensor, 0, cluster_axis=1, subdevice_id=default, memory_config=ttnn.DRAM_MEMORY_CONFIG,
        topology=ttnn.Topology.Linear).shape))
    _step(report, "record_event", lambda: ttnn.event_synchronize(
        ttnn.record_event(dev.mesh, queue, sub_device_ids=[default])) or "ok")
    _step(report, "synchronize_sub_device", lambda: ttnn.synchronize_device(dev.mesh, queue,
                                                                            sub_device_ids=[default]) or "ok")
    dst = dev.allocate(src.shape, BF16)
    dst.placements = src.placements
    _step(report, "program", lambda: dev.run(_copy_program(src, dst, src.num_pages)).program)


def refuse(dev: TTDevice, report: dict) -> None:
    _step(report, "open_sub_devices", lambda: dev.open_sub_devices(COMPUTE_CORES) or "ok")


def load(dev: TTDevice, report: dict) -> None:
    """ttnn's own load of the manager TTDevice builds (TTDevice refuses it on a mock, `refuse`)."""
    ttnn = import_ttnn()
    from ttprefill.device.tt_device import sub_device_core_ranges

    def cores(rects):
        return ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(x0, y0), ttnn.CoreCoord(x1, y1))
                                  for x0, y0, x1, y1 in rects})

    compute, collectives = sub_device_core_ranges(COMPUTE_CORES)
    manager = dev.mesh.create_sub_device_manager([ttnn.SubDevice([cores(compute)]),
                                                  ttnn.SubDevice([cores(collectives)])], 0)
    print("loading", flush=True)
    dev.mesh.load_sub_device_manager(manager)
    report["loaded"] = "ok"
    dev.mesh.clear_loaded_sub_device_manager()
    dev.mesh.remove_sub_device_manager(manager)


def main(step: str, path: str) -> None:
    report: dict = {"step": step}
    with TTDevice((1, 2), topology="line") as dev:
        report["mock"] = dev.mock
        {"accept": accept, "refuse": refuse, "load": load}[step](dev, report)
    Path(path).write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
