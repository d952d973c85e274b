"""The card path's mesh on ttnn's mock n300, in a process of its own (ttnn holds one cluster per process):

    python mesh_driver.py report.json

Through TTDevice((1, 2)) as a user would: the fabric is configured and the mesh opened; tensors are placed
with ttnn's mesh mappers and composed with its composers; ttnn's all_gather / reduce_scatter / all_reduce run
on them; one program runs on both chips on sharded tensors and a program per chip through
ttnn.MeshProgramDescriptor. A mock executes no kernel (reads give zeros), so the report holds what the host
path did: shapes, placements, addresses, the links ttnn gives CCL, and every error.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TEST_KERNELS = HERE.parents[1] / "kernels"

from ttprefill.device.mesh_placement import REPLICATE, Replicate, Shard, shard_placements  # noqa: E402
from ttprefill.device.program import (  # noqa: E402
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    Program,
    Role,
)
from ttprefill.device.tt_device import TTDevice  # noqa: E402
from ttprefill.device.ttnn_env import import_ttnn  # noqa: E402

BF16 = DataFormat.Float16_b
PLACEMENTS = {"replicate": REPLICATE, "shard0": shard_placements(0), "shard1": shard_placements(1),
              "rows0_cols1": (Shard(0), Shard(1)), "rep_cols1": (Replicate(), Shard(1))}


def _label(placements) -> list:
    return [f"shard{p.dim}" if isinstance(p, Shard) else "replicate" for p in placements]


def _describe(dev: TTDevice, t) -> dict:
    return {"shape": list(t.shape), "global_shape": list(t.global_shape), "placements": _label(t.placements),
            "address": t.address, "pages": t.num_pages}


def _copy_program(src, dst, tiles: int) -> Program:
    """reader -> copy -> writer on one core over the first `tiles` tiles of each chip's shard."""
    c = CoreCoord(0, 0)
    cores = CoreRangeSet.of([c])
    return Program(
        kernels=[
            Kernel(TEST_KERNELS / "reader_tiles.cpp", Role.RISCV_1, cores, src.accessor_args() + src.accessor_args(),
                   runtime_args={c: [src.address, 0, 0, tiles, 1, 0]}),
            Kernel(TEST_KERNELS / "compute_op.cpp", Role.COMPUTE, cores, defines={"OP_COPY": "1"},
                   runtime_args={c: [tiles, 0]}, compute_config=ComputeConfig(fp32_dest_acc_en=False)),
            Kernel(TEST_KERNELS / "writer_tiles.cpp", Role.RISCV_0, cores, dst.accessor_args(),
                   runtime_args={c: [dst.address, 0, tiles]}),
        ],
        circular_buffers=[CircularBuffer(0, src.data_format, src.page_size, 2, cores),
                          CircularBuffer(1, src.data_format, src.page_size, 2, cores),
                          CircularBuffer(16, dst.data_format, dst.page_size, 2, cores)],
        inputs={"src": src}, outputs={"dst": dst}, name=f"copy_{tiles}")


def _step(report: dict, name: str, fn):
    try:
        report[name] = fn()
    except Exception as e:  # recorded, so the tests name what failed
        report[name] = {"error": f"{type(e).__name__}: {e}"[:2000], "traceback": traceback.format_exc()[-4000:]}


def _placement(dev: TTDevice) -> dict:
    out = {}
    x = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
    for name, placements in PLACEMENTS.items():
        t = dev.upload(x, BF16, placements)
        entry = _describe(dev, t)
        composed = dev.download(t)
        shards = dev.download_shards(t)
        entry.update(download_shape=list(composed.shape), shard_shapes=[list(s.shape) for s in shards])
        dev.write(t, x)  # a global array split by the same mapper
        dev.free(t)
        out[name] = entry
    try:
        dev.upload(np.zeros((64, 33), np.float32), BF16, shard_placements(1))
        out["not_divisible"] = "accepted"
    except ValueError as e:
        out["not_divisible"] = str(e)
    return out


def _collectives(dev: TTDevice) -> dict:
    out = {}
    x = np.ones((64, 256), np.float32)
    sharded = dev.upload(x, BF16, shard_placements(1))
    replicated = dev.upload(x, BF16)
    cases = {
        "all_gather": lambda: dev.all_gather(sharded, 1),
        "all_gather_axis1": lambda: dev.all_gather(sharded, 1, cluster_axis=1),
        "reduce_scatter_axis1": lambda: dev.reduce_scatter(replicated, 1, cluster_axis=1),
        "all_reduce_axis1": lambda: dev.all_reduce(replicated, cluster_axis=1),
    }
    for name, fn in cases.items():
        try:
            t = fn()
            out[name] = {**_describe(dev, t), "download_shape": list(dev.download(t).shape)}
        except Exception as e:
            out[name] = {"error": f"{type(e).__name__}: {e}"[:2000]}
    return out


def _programs(dev: TTDevice) -> dict:
    out = {}
    x = np.zeros((128, 64), np.float32)  # 2 x 2 tiles a chip after sharding dim 0
    src = dev.upload(x, BF16, shard_placements(0))
    dst = dev.allocate(src.shape, BF16)
    dst.placements = src.placements
    dev.run(_copy_program(src, dst, src.num_pages))
    out["spmd"] = {"dispatched": True, "tiles_per_chip": src.num_pages, "download_shape": list(dev.download(dst).shape)}
    per_chip = {(0, c): _copy_program(src, dst, c + 1) for c in range(2)}
    dev.run_per_chip(per_chip, name="copy_per_chip")
    out["per_chip"] = {"dispatched": True, "tiles": [c + 1 for c in range(2)]}
    other = dev.allocate(src.shape, BF16)
    try:
        dev.run_per_chip({(0, 0): _copy_program(src, dst, 1), (0, 1): _copy_program(src, other, 1)})
        out["mismatched_tensors"] = "accepted"
    except ValueError as e:
        out["mismatched_tensors"] = str(e)
    return out


def main(path: str) -> None:
    t0 = time.perf_counter()
    ttnn = import_ttnn()
    report: dict = {"cluster": "n300"}
    with TTDevice((1, 2)) as dev:
        report["mock"] = dev.mock
        report["chips"] = dev.num_chips
        report["chip_grids"] = dev.chip_grids
        report["has_mesh"] = dev.capabilities.has_mesh
        report["fabric"] = str(ttnn.get_fabric_config()) if hasattr(ttnn, "get_fabric_config") else None
        ccl = ttnn._ttnn.operations.ccl
        report["ccl_links"] = {str(axis): int(ccl.get_num_links(dev.mesh, axis)) for axis in (None, 0, 1)}
        _step(report, "placement", lambda: _placement(dev))
        _step(report, "collectives", lambda: _collectives(dev))
        _step(report, "programs", lambda: _programs(dev))
    # A ring fabric on the same cluster: opened, one all-reduce, closed.
    def ring() -> dict:
        with TTDevice((1, 2), topology="ring") as dev:
            t = dev.all_reduce(dev.upload(np.ones((64, 128), np.float32), BF16), cluster_axis=1)
            return {"all_reduce_shape": list(t.shape)}
    _step(report, "ring", ring)
    report["total_s"] = time.perf_counter() - t0
    Path(path).write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
