"""TTDevice's fused matmul + collective ops on ttnn's mock n300 or T3000, in a process of its own (ttnn holds one
cluster per process):

    python fused_driver.py n300|t3000 report.json

For each mesh the cluster opens as (n300: 1x2 on a line fabric; T3000: 1x8 on a ring, then 2x4 on a line):
TTDevice.all_gather_matmul and matmul_reduce_scatter (one batch and four) on tiled bf16 tensors, and on the n300
the raw ttnn.experimental.all_gather_matmul_async call TTDevice refuses, to record that ttnn refuses it too. A
mock executes no kernel, so the report holds shapes, placements and every error.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from ttprefill.device.mesh_placement import shard_placements
from ttprefill.device.program import DataFormat
from ttprefill.device.tt_device import TTDevice
from ttprefill.ops.linear.fused_blocking import all_gather_matmul_blocking, matmul_reduce_scatter_blocking

BF16 = DataFormat.Float16_b
MESHES = {"n300": [((1, 2), "line")], "t3000": [((1, 8), "ring"), ((2, 4), "line")]}
M, K_PER_CHIP, N = 256, 256, 512  # the gather's rows, each chip's columns, the matmuls' output width


def _error(e: Exception) -> dict:
    return {"error": f"{type(e).__name__}: {e}"[:1500]}


def _tensor(t) -> dict:
    return {"shape": list(t.shape), "global_shape": list(t.global_shape),
            "placements": [f"shard{p.dim}" if hasattr(p, "dim") else "replicate" for p in t.placements]}


def _raw_all_gather_matmul(dev: TTDevice, x, w) -> dict:
    """The ttnn call itself, past TTDevice's refusal: its own error is the record."""
    from ttprefill.device import fused_ccl

    try:
        fused_ccl.all_gather_matmul(dev._ttnn, dev.mesh, x.ttnn_tensor, w.ttnn_tensor, M, K_PER_CHIP,
                                    K_PER_CHIP * dev.num_chips, N // dev.num_chips, dev.num_chips, dev.grid,
                                    all_gather_matmul_blocking(dev.grid, M, K_PER_CHIP, N // dev.num_chips))
        dev._ttnn.synchronize_device(dev.mesh)
        return {"accepted": True}
    except Exception as e:
        return _error(e)


def _mesh(mesh_shape, topology: str) -> dict:
    report: dict = {}
    with TTDevice(mesh_shape, topology=topology) as dev:
        chips = dev.num_chips
        x = dev.upload(np.zeros((M, K_PER_CHIP * chips), np.float32), BF16, shard_placements(1))
        w = dev.upload(np.zeros((K_PER_CHIP * chips, N), np.float32), BF16, shard_placements(1))
        try:
            gathered, out = dev.all_gather_matmul(x, w, all_gather_matmul_blocking(dev.grid, M, K_PER_CHIP,
                                                                                   N // chips))
            report["all_gather_matmul"] = {"gathered": _tensor(gathered), "out": _tensor(out)}
        except Exception as e:
            report["all_gather_matmul"] = _error(e)
            if chips == 2:
                report["all_gather_matmul_raw"] = _raw_all_gather_matmul(dev, x, w)
        a = dev.upload(np.zeros((M, K_PER_CHIP), np.float32), BF16)  # a row-parallel input: each chip its own K
        w2 = dev.upload(np.zeros((K_PER_CHIP, N), np.float32), BF16)
        for batches in (1, 4):
            try:
                blocking = matmul_reduce_scatter_blocking(dev.grid, M, K_PER_CHIP, N, batches)
                mm, reduced = dev.matmul_reduce_scatter(a, w2, blocking, batches=batches)
                report[f"matmul_reduce_scatter/{batches}"] = {"mm": _tensor(mm), "reduced": _tensor(reduced)}
            except Exception as e:
                report[f"matmul_reduce_scatter/{batches}"] = _error(e)
    return report


def main(cluster: str, path: str) -> None:
    t0 = time.perf_counter()
    report: dict = {"cluster": cluster, "meshes": {}}
    for mesh_shape, topology in MESHES[cluster]:
        key = f"{mesh_shape[0]}x{mesh_shape[1]} {topology}"
        try:
            report["meshes"][key] = _mesh(mesh_shape, topology)
        except Exception as e:
            report["meshes"][key] = {**_error(e), "traceback": traceback.format_exc()[-4000:]}
    report["total_s"] = time.perf_counter() - t0
    Path(path).write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
