"""The card path's mesh on ttnn's mock n300 or T3000, in a process of its own (ttnn holds one cluster per
process):

    python mesh_driver.py n300|t3000 report.json

Through TTDevice as a user would, for each mesh the cluster opens as (n300: 1x2 on a line fabric, then on a
ring fabric; T3000: 2x4 on a line fabric, then 1x8 on a ring): the fabric is configured and the mesh
opened; tensors are placed with ttnn's mesh mappers and composed with its composers; ttnn's all_gather /
reduce_scatter / all_reduce run over each mesh axis and the whole mesh; on the first mesh one program runs on
every chip on sharded tensors and a program per chip through ttnn.MeshProgramDescriptor. A mock executes no
kernel (reads give zeros), so the report holds what the host path did: shapes, placements, addresses, the
links ttnn gives collectives, and every error.
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


def _shards(dev: TTDevice) -> dict:
    """A tensor written chip by chip (write_shard, as a tensor-parallel split writes its weights), refused for
    reads until every chip's shard is in; then each chip's shard read alone (read_shard_pages) and all of them
    (download_shards); a program on a view of a tensor's first rows (the device stack's first_rows)."""
    from ttprefill.device.tensor import DeviceTensor

    out = {}
    chips = dev.num_chips
    t = dev.allocate((64, 96), BF16, shard_placements(0))
    for chip in range(chips - 1):
        dev.write_shard(t, chip, np.full((64, 96), chip, np.float32))
    try:
        dev.download_shards(t)
        out["partial_read"] = "accepted"
    except ValueError as e:
        out["partial_read"] = str(e)
    dev.write_shard(t, chips - 1, np.full((64, 96), chips - 1, np.float32))
    out["shard_bytes"] = [len(dev.read_shard_pages(t, chip, 0, t.num_pages)) for chip in range(chips)]
    out["shard_shapes"] = [list(a.shape) for a in dev.download_shards(t)]
    out["global_shape"] = list(t.global_shape)
    try:
        dev.read_shard_pages(t, chips, 0, 1)
        out["chip_outside"] = "accepted"
    except ValueError as e:
        out["chip_outside"] = str(e)
    dst = dev.allocate((64, 96), BF16)
    view = dev.view_rows(dst, 40)  # its first 40 rows: the first 2 tile rows' pages
    dev.run(_copy_program(t, view, view.num_pages))
    out["view_program"] = {"dispatched": True, "pages": view.num_pages}
    try:
        dev.run(_copy_program(t, DeviceTensor((64, 64), BF16, dst.address, dev), 1))
        out["other_width_view"] = "accepted"
    except ValueError as e:
        out["other_width_view"] = str(e)
    for x in (t, dst):
        dev.free(x)
    zeroed = dev.allocate_zeroed((64, 96), BF16, shard_placements(0))  # ttnn.zeros on the mesh
    out["zeroed"] = {"pages": zeroed.num_pages, "shape": list(zeroed.shape), "global_shape": list(zeroed.global_shape),
                     "values": sorted({float(v) for a in dev.download_shards(zeroed) for v in np.unique(a)})}
    dev.free(zeroed)
    out["zeroes_allocations"] = dev.capabilities.zeroes_allocations
    return out


def _collectives(dev: TTDevice) -> dict:
    """Each collective over each mesh axis of more than one chip and over the whole mesh ("all")."""
    out = {}
    rows, cols = dev.capabilities.mesh_shape
    x = np.ones((64, 256 * rows * cols), np.float32)
    sharded = dev.upload(x, BF16, shard_placements(1))  # 256 columns a chip
    replicated = dev.upload(np.ones((64, 256), np.float32), BF16)
    axes = [a for a, size in enumerate((rows, cols)) if size > 1] + [None]
    for axis in axes:
        cases = {
            "all_gather": lambda: dev.all_gather(sharded, 1, cluster_axis=axis),
            "reduce_scatter": lambda: dev.reduce_scatter(replicated, 1, cluster_axis=axis),
            "all_reduce": lambda: dev.all_reduce(replicated, cluster_axis=axis),
        }
        for name, fn in cases.items():
            key = f"{name}/{'all' if axis is None else axis}"
            try:
                t = fn()
                out[key] = {**_describe(dev, t), "download_shape": list(dev.download(t).shape)}
            except Exception as e:
                out[key] = {"error": f"{type(e).__name__}: {e}"[:2000]}
    return out


def _programs(dev: TTDevice) -> dict:
    out = {}
    x = np.zeros((64 * dev.num_chips, 64), np.float32)  # 2 x 2 tiles a chip after sharding dim 0
    src = dev.upload(x, BF16, shard_placements(0))
    dst = dev.allocate(src.shape, BF16)
    dst.placements = src.placements
    dev.run(_copy_program(src, dst, src.num_pages))
    out["spmd"] = {"dispatched": True, "tiles_per_chip": src.num_pages, "download_shape": list(dev.download(dst).shape)}
    rows, cols = dev.capabilities.mesh_shape
    tiles = {(r, c): 1 + (r * cols + c) % src.num_pages for r in range(rows) for c in range(cols)}
    dev.run_per_chip({coord: _copy_program(src, dst, n) for coord, n in tiles.items()}, name="copy_per_chip")
    out["per_chip"] = {"dispatched": True, "tiles": list(tiles.values())}
    try:  # ttnn 0.81.1 crashes on a descriptor that leaves chips out; TTDevice refuses it first
        dev.run_per_chip({(0, 0): _copy_program(src, dst, 1)})
        out["partial"] = "accepted"
    except ValueError as e:
        out["partial"] = str(e)
    other = dev.allocate(src.shape, BF16)
    try:
        programs = {coord: _copy_program(src, dst, 1) for coord in tiles}
        programs[(0, 1)] = _copy_program(src, other, 1)
        dev.run_per_chip(programs)
        out["mismatched_tensors"] = "accepted"
    except ValueError as e:
        out["mismatched_tensors"] = str(e)
    return out


MESHES = {"n300": [((1, 2), "line"), ((1, 2), "ring")], "t3000": [((2, 4), "line"), ((1, 8), "ring")]}


def _open(mesh_shape, topology: str, full: bool) -> dict:
    ttnn = import_ttnn()
    report: dict = {}
    with TTDevice(mesh_shape, topology=topology) as dev:
        report["mock"] = dev.mock
        report["chips"] = dev.num_chips
        report["chip_grids"] = dev.chip_grids
        report["has_mesh"] = dev.capabilities.has_mesh
        report["mesh_shape"] = list(dev.capabilities.mesh_shape)
        report["fabric"] = str(ttnn.get_fabric_config())
        ccl = ttnn._ttnn.operations.ccl
        report["ccl_links"] = {str(axis): int(ccl.get_num_links(dev.mesh, axis)) for axis in (None, 0, 1)}
        report["fabric_max_payload_bytes"] = int(ttnn.get_tt_fabric_max_payload_size_bytes())
        if full:
            _step(report, "placement", lambda: _placement(dev))
            _step(report, "programs", lambda: _programs(dev))
            _step(report, "shards", lambda: _shards(dev))
        _step(report, "collectives", lambda: _collectives(dev))
    return report


def main(cluster: str, path: str) -> None:
    t0 = time.perf_counter()
    report: dict = {"cluster": cluster, "meshes": {}}
    for i, (mesh_shape, topology) in enumerate(MESHES[cluster]):
        key = f"{mesh_shape[0]}x{mesh_shape[1]} {topology}"
        try:
            report["meshes"][key] = _open(mesh_shape, topology, full=i == 0)
        except Exception as e:
            report["meshes"][key] = {"error": f"{type(e).__name__}: {e}"[:2000],
                                     "traceback": traceback.format_exc()[-4000:]}
    report["total_s"] = time.perf_counter() - t0
    Path(path).write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
