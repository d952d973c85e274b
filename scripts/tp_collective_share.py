"""Modeled TTFT of one chip of a tensor-parallel split plus the split's collectives, and their share.

    .venv/bin/python scripts/tp_collective_share.py qwen3.5-9b 1 2 line 32768
    .venv/bin/python scripts/tp_collective_share.py qwen3.5-27b 1 8 ring 32768

A stopgap until `ttprefill bench ttft --mesh` times the mesh itself: it runs the single-chip TTFT bench
(bench/ttft.py, timing-only simulation) over chip 0's config of the plan (model/tensor_parallel.py:
the chip's heads, MLP width and vocabulary slice; every chip runs the same shapes), and adds every
collective of `per_chip_ops` timed by the Ethernet model. The bench reads its config by preset name, so
the preset is swapped for the chip config while it runs. Everything printed is modeled. Limits: the
norms run on whole rows on every chip (scheme all_reduce), collectives do not overlap compute
(mesh_timing's rule), host time is not included.
"""

import json
import sys

import ttprefill.model.config as config_module
from ttprefill.bench.ttft import ttft_bench
from ttprefill.model.tensor_parallel import TensorParallelPlan, collective_times, per_chip_ops


def main(argv):
    if len(argv) != 5:
        raise SystemExit("usage: tp_collective_share.py MODEL ROWS COLS line|ring SEQ")
    model, rows, cols, topology, seq = argv[0], int(argv[1]), int(argv[2]), argv[3], int(argv[4])
    full = config_module.get_preset(model)
    tp = rows * cols
    chip = TensorParallelPlan(full, tp).chip_config(0)
    preset = config_module.get_preset
    config_module.get_preset = lambda name: chip if name == model else preset(name)
    try:
        run = ttft_bench(model=model, seq=seq)
    finally:
        config_module.get_preset = preset
    ops = per_chip_ops(full, tp, seq, run["chunk_tokens"])
    timed = collective_times(ops, (rows, cols), topology, costs=run["costs"])
    total = run["ttft_s"] + timed["seconds"]
    print(json.dumps({
        "what": "modeled TTFT of a tensor-parallel split: one chip's programs plus the collectives",
        "model": model, "mesh": [rows, cols], "topology": topology, "seq": seq, "tp": tp,
        "chunk_tokens": run["chunk_tokens"], "weight_format": run["weight_format"], "costs": run["costs"],
        "model_version": run["model_version"], "chip_compute_s": run["ttft_s"], "chip_by_op": run["by_op"],
        "collectives_s": timed["seconds"], "collectives_by_kind": timed["by_kind"], "ttft_s": total,
        "collective_share": timed["seconds"] / total, "sim_wall_s": run["sim_wall_s"]}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
