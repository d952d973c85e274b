"""`ttprefill bench ttft --mesh RxC`: modeled time to first token of a tensor-parallel split over a mesh.

Every chip of the split runs the same shapes (model/tensor_parallel.py: each chip holds an equal share of
the GDN value heads with their q/k heads, of the attention q heads with their kv heads, of the MLP width
and of the vocabulary), so one chip's programs are timed as the single-chip bench times a whole model
(bench/ttft.py over the plan's chip config) and the split's collectives are added, each timed by the
Ethernet model (device/mesh_timing.py via tensor_parallel.collective_times: the links and the workers'
path to them, versioned apart from the chip's timing model as mesh_timing_version). Collectives do not
overlap compute (mesh_timing says why), so the two add. The host transfers (each chip's embeddings and GDN
state share, the gathered logits row) are timed over the cards' PCIe links by device/host_link.py, the second
chip of each n300 through the first's Ethernet, and add too (the engine waits on each). Everything is modeled.
"""

from __future__ import annotations


def mesh_ttft_bench(model: str, seq: int, mesh: tuple[int, int], topology: str = "line",
                    weight_format: str | None = None, costs: str | None = None, options=None) -> dict:
    from ttprefill.device.host_link import HostTransfer, host_link_times
    from ttprefill.device.sim_device import DEFAULT_COST_SETTING
    from ttprefill.model.config import get_preset
    from ttprefill.model.tensor_parallel import TensorParallelPlan, collective_times, per_chip_ops

    from .ttft import ttft_bench

    rows, cols = mesh
    tp = rows * cols
    full = get_preset(model)
    costs = costs or DEFAULT_COST_SETTING
    chip = TensorParallelPlan(full, tp).chip_config(0)  # refuses, naming the sizes that work, a split that fails
    run = ttft_bench(model, seq, weight_format, costs, options, config=chip)
    timed = collective_times(per_chip_ops(full, tp, seq, run["chunk_tokens"]), (rows, cols), topology, costs=costs)
    host = host_link_times([HostTransfer(**t) for t in run["host_transfers"]], costs, chips=tp)
    by_op = dict(run["by_op"])
    by_op["collectives"] = timed["seconds"]
    by_op["host"] = host["seconds"]
    ttft = run["device_s"] + timed["seconds"] + host["seconds"]
    return {
        **run,
        "mesh": [rows, cols], "topology": topology, "tp": tp,
        "ttft_s": ttft, "by_op": by_op, "chip_compute_s": run["device_s"],
        "host_transfer_s": host["seconds"], "host_transfer": {**run["host_transfer"], **host},
        "collectives_by_kind": timed["by_kind"], "collective_share": timed["seconds"] / ttft,
        "mesh_timing_version": timed["mesh_timing_version"],
        "note": (f"modeled: one chip's programs of a {tp}-way tensor-parallel split (every chip runs the same "
                 "shapes), timed as the single-chip bench does, plus the split's collectives by the Ethernet model "
                 "and the host transfers of every chip over the cards' PCIe links, neither overlapped with compute. "
                 + run["note"]),
    }
