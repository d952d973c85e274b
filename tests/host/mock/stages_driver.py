"""TTDevice.stage_devices on ttnn's mock n150 (1x1) or n300 (1x2), in a process of its own (ttnn holds one cluster
per process):

    python stages_driver.py n150|n300 report.json

Opens the card's mesh, takes its stage devices (one TTDevice per chip over a 1x1 submesh) and drives each as the
pipeline split does: upload, allocate, a small program through generic_op, reads and writes, transfers on its
second command queue, free. Then the bookkeeping ttnn exposes: each stage's DRAM allocator and program cache, the
parent refusing to run, and closing (stages then parent; parent alone), after which the mesh must open again. A
mock executes no kernel and reads give zeros, so the report holds what the host path did: each call accepted or
its error, shapes, addresses, allocator figures.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mesh_driver import _copy_program  # noqa: E402
from mock_env import MESH_SHAPES  # noqa: E402

from ttprefill.device.program import DataFormat  # noqa: E402
from ttprefill.device.tt_device import TTDevice  # noqa: E402

BF16 = DataFormat.Float16_b
SHAPE = (64, 64)  # four bf16 tiles


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"[:600]


def drive_stage(stage: TTDevice, report: dict) -> None:
    """Every call the device stack makes of a one-chip device, each recorded as "ok" or its error."""
    steps = report["steps"]

    def step(name, fn):
        try:
            out = fn()
            steps[name] = "ok"
            return out
        except Exception as e:  # noqa: BLE001 - the report names it
            steps[name] = _error(e) + "\n" + traceback.format_exc()[-1200:]
            return None

    src = step("upload", lambda: stage.upload(np.ones(SHAPE, np.float32), BF16))
    dst = step("allocate", lambda: stage.allocate(SHAPE, BF16))
    zeroed = step("allocate_zeroed", lambda: stage.allocate_zeroed(SHAPE, BF16))
    if src is None or dst is None or zeroed is None:
        return
    report["first_address"] = src.address
    cache = stage.mesh.num_program_cache_entries
    before = cache()
    step("run", lambda: stage.run(_copy_program(src, dst, 2)))
    report["program_cache_entries_added"] = cache() - before
    got = step("download", lambda: stage.download(dst))
    report["download_shape"] = None if got is None else list(got.shape)
    pages = step("read_pages", lambda: stage.read_pages(dst, 1, 2))
    report["read_pages_bytes"] = None if pages is None else int(len(pages))
    step("write_pages", lambda: stage.write_pages(zeroed, 0, pages))
    step("write", lambda: stage.write(dst, np.zeros(SHAPE, np.float32)))
    step("write_ahead_then_run", lambda: (stage.write_ahead(src, np.ones(SHAPE, np.float32)),
                                          stage.run(_copy_program(src, dst, 2))))
    landed = step("read_ahead_then_download", lambda: (stage.read_ahead(dst), stage.download(dst))[1])
    report["landed_shape"] = None if landed is None else list(landed.shape)
    step("free", lambda: [stage.free(t) for t in (src, dst, zeroed)])
    report["transfers_kept_after_free"] = len(stage._landed) + len(stage._inbound)


def dram_allocated(ttnn, device: TTDevice) -> int:
    return int(ttnn.get_memory_view(device.mesh, ttnn.BufferType.DRAM).total_bytes_allocated_per_bank)


def main(cluster: str, path: str) -> None:
    report: dict = {"cluster": cluster}
    dev = TTDevice(MESH_SHAPES[cluster])
    ttnn = dev._ttnn
    try:
        stages = dev.stage_devices()
        report["stages"] = len(stages)
        report["same_list_again"] = [id(s) for s in dev.stage_devices()] == [id(s) for s in stages]
        report["mesh_shapes"] = [list(s.capabilities.mesh_shape) for s in stages]
        report["submesh_shapes"] = [[int(d) for d in s.mesh.shape] for s in stages]
        report["chips"] = [[int(c) for c in s.mesh.get_device_ids()] for s in stages]
        report["models_time"] = [s.capabilities.models_time for s in stages]
        report["per_stage"] = []
        for stage in stages:
            entry: dict = {"steps": {}}
            drive_stage(stage, entry)
            report["per_stage"].append(entry)
        # Allocations on one stage, against the other stage's allocator.
        held = stages[0].allocate(SHAPE, BF16)
        report["dram_allocated_per_bank_while_stage_0_holds_a_tensor"] = [dram_allocated(ttnn, s) for s in stages]
        stages[0].free(held)
        report["dram_allocated_per_bank_after_free"] = [dram_allocated(ttnn, s) for s in stages]
        try:
            dev.upload(np.zeros(SHAPE, np.float32), BF16)
            report["parent_upload"] = "accepted"
        except Exception as e:  # noqa: BLE001
            report["parent_upload"] = _error(e)
        # Close the stage devices, then the parent.
        for stage in stages:
            stage.close()
        report["stages_closed"] = [s.closed for s in stages]
        report["parent_open_after_stages_closed"] = not dev.closed
    finally:
        dev.close()
    try:
        stages[0].upload(np.zeros(SHAPE, np.float32), BF16)
        report["stage_upload_after_close"] = "accepted"
    except Exception as e:  # noqa: BLE001
        report["stage_upload_after_close"] = _error(e)

    # Nothing left open: the mesh opens again; this time the parent's close() closes its stages itself.
    again = TTDevice(MESH_SHAPES[cluster])
    try:
        stages = again.stage_devices()
        for stage in stages:
            stage.upload(np.zeros(SHAPE, np.float32), BF16)
    finally:
        again.close()
    report["reopened_stages_closed_with_parent"] = [s.closed for s in stages]
    last = TTDevice(MESH_SHAPES[cluster])  # and once more after that close
    report["reopened_again"] = not last.closed
    last.close()
    Path(path).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
