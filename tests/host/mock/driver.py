"""The card path end to end on one mock cluster, in a process of its own.

ttnn holds one cluster per process, named by the environment before it starts, so each cluster runs
this script in a subprocess (tests/host/mock/test_mock_cluster.py starts it with mock_env's
environment) and the tests read the JSON it writes:

    python driver.py n150 report.json

Through TTDevice, as a user would: open the mesh, build every registered program on it (real DRAM
addresses, real NoC coordinates), run each through generic_op twice (the second run must hit the
program cache), download the outputs, free the tensors, close. Besides that, a few probes of ttnn
itself: its L1 allocator's base and top, the largest circular-buffer total it accepts, and whether
the program cache tells apart programs that differ only in their runtime-arg layout.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # host_programs

from host_programs import copy_program  # noqa: E402
from mock_env import MESH_SHAPES  # noqa: E402

from ttprefill.device.program import (  # noqa: E402
    L1_BYTES,
    L1_RESERVED_BYTES,
    CircularBuffer,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
)
from ttprefill.device.tt_device import TTDevice, TTTensor, program_to_descriptor  # noqa: E402
from ttprefill.device.ttnn_checks import HARDWARE_CB_BUDGET  # noqa: E402
from ttprefill.device.ttnn_env import import_ttnn  # noqa: E402
from ttprefill.ops import registry  # noqa: E402


def _tensors(program) -> list[TTTensor]:
    out: list[TTTensor] = []
    for t in [*program.inputs.values(), *program.outputs.values()]:
        if not any(t is held for held in out):
            out.append(t)
    return out


def run_registered(device: TTDevice, name: str, build) -> dict:
    entry: dict = {}
    try:
        with registry.building_on(device):
            program = build()
        entry["cb_high_water"] = max(program.l1_bytes_on(c) for c in program.all_cores())
        entry["cores"] = len(program.all_cores())
        entries = device.mesh.num_program_cache_entries
        before = entries()
        t0 = time.perf_counter()
        device.run(program)
        entry["first_run_s"] = time.perf_counter() - t0
        after_first = entries()
        t0 = time.perf_counter()
        device.run(program)
        entry["second_run_s"] = time.perf_counter() - t0
        entry["cache_entries_added"] = [after_first - before, entries() - after_first]
        shapes = {}
        for out_name, t in program.outputs.items():
            values = device.download(t)
            shapes[out_name] = [list(values.shape), str(values.dtype)]
        entry["downloads"] = shapes
        for t in _tensors(program):
            device.free(t)
        entry["dispatched"] = True
    except Exception as e:  # reported per program, so one failure does not hide the others
        entry["dispatched"] = False
        entry["error"] = f"{type(e).__name__}: {e}"[:2000]
        entry["traceback"] = traceback.format_exc()[-4000:]
    return entry


def _copy_on(device: TTDevice, cores: int, tiles: int = 2, data_format: DataFormat = DataFormat.Float16_b):
    """The small copy program on the first `cores` cores of row 0, with real tensors."""
    program = copy_program(cores, 1, tiles, data_format=data_format)
    n = cores * tiles
    src = device.upload(np.zeros((n * 32, 32), np.float32), data_format)
    dst = device.allocate((n * 32, 32), data_format)
    reader, writer, _compute = program.kernels
    reader.compile_time_args = src.accessor_args() + src.accessor_args()
    writer.compile_time_args = dst.accessor_args()
    for i, core in enumerate(program.kernels[0].cores.cores()):
        reader.runtime_args[core] = [src.address, 0, i * tiles, tiles, 1, 0]
        writer.runtime_args[core] = [dst.address, i * tiles, tiles]
    program.inputs, program.outputs = {"src": src}, {"dst": dst}
    return program


def cache_probe(device: TTDevice) -> dict:
    """Program-cache behaviour: new arg values hit; a different per-core arg layout must miss."""
    entries = device.mesh.num_program_cache_entries
    out = {}
    base = _copy_on(device, 2)
    start = entries()
    device.run(base)
    out["first"] = entries() - start
    values = _copy_on(device, 2)  # same layout, other tensors: other addresses in the args
    start = entries()
    device.run(values)
    out["new_arg_values"] = entries() - start
    layout = _copy_on(device, 2)
    layout.kernels[1].runtime_args[CoreCoord(1, 0)].append(0)  # one more arg on one core
    start = entries()
    device.run(layout)
    out["one_more_arg_on_one_core"] = entries() - start
    fewer = _copy_on(device, 2)
    del fewer.kernels[2].runtime_args[CoreCoord(1, 0)]  # a core without args
    start = entries()
    device.run(fewer)
    out["a_core_without_args"] = entries() - start
    return out


def allocator_probe(ttnn, device: TTDevice) -> dict:
    """Whether ttnn accepts circular buffers filling exactly our budget, and rejects 32 B more."""
    out = {}
    for label, total in (("at_budget", HARDWARE_CB_BUDGET), ("over_by_32", HARDWARE_CB_BUDGET + 32)):
        program = _copy_on(device, 1)
        used = sum(cb.total_size for cb in program.circular_buffers)
        program.circular_buffers.append(
            CircularBuffer(2, DataFormat.Float16_b, 32, (total - used) // 32, CoreRangeSet.grid(1, 1)))
        # Straight to generic_op: our own checks would stop the second one before ttnn sees it.
        program.validate = lambda: None
        try:
            ttnn.generic_op(device.io_tensors(program), program_to_descriptor(program, ttnn))
            ttnn.synchronize_device(device.mesh)
            out[label] = "accepted"
        except Exception as e:
            out[label] = "rejected: " + " ".join(line.strip() for line in str(e).split("backtrace:")[0].splitlines())[:400]
    return out


def bf16_round_trip(device: TTDevice) -> dict:
    """Upload, download and page access of a bfloat16 tensor (the mock reads back zeros)."""
    t = device.upload(np.ones((64, 64), np.float32), DataFormat.Float16_b)
    values = device.download(t)
    pages = device.read_pages(t, 1, 2)
    device.write_pages(t, 0, pages)
    return {"shape": list(values.shape), "dtype": str(values.dtype), "page_bytes": int(len(pages))}


def main(cluster: str, out_path: str) -> int:
    ttnn = import_ttnn()
    report: dict = {"cluster": cluster, "programs": {}}
    t0 = time.perf_counter()
    with TTDevice(MESH_SHAPES[cluster]) as device:
        report["open_s"] = time.perf_counter() - t0
        report["mock"] = device.mock
        report["chip_grids"] = device.chip_grids
        report["l1_base"] = int(ttnn.get_allocator_base_address(device.mesh, ttnn.BufferType.L1))
        view = ttnn.get_memory_view(device.mesh, ttnn.BufferType.L1)
        report["l1_top"] = report["l1_base"] + int(view.total_bytes_per_bank)
        report["program_constants"] = {"L1_BYTES": L1_BYTES, "L1_RESERVED_BYTES": L1_RESERVED_BYTES}
        for name, build in sorted(registry.discover().items()):
            report["programs"][name] = run_registered(device, name, build)
        for probe, fn in (("cache", lambda: cache_probe(device)), ("allocator", lambda: allocator_probe(ttnn, device)),
                          ("bf16", lambda: bf16_round_trip(device)),
                          # A Bfp8_b copy with 16-bit DST: the case where bfp8_pack_precise decides the packer's path.
                          ("bfp8_copy", lambda: device.run(_copy_on(device, 1, data_format=DataFormat.Bfp8_b)).program)):
            try:
                report[probe] = fn()
            except Exception as e:
                report[probe] = {"error": f"{type(e).__name__}: {e}"[:2000], "traceback": traceback.format_exc()[-4000:]}
    report["total_s"] = time.perf_counter() - t0
    Path(out_path).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
