"""`ttprefill bench ttft --mesh RxC`: modeled time to first token of a tensor-parallel split over a mesh.

Every chip of the split runs the same shapes (model/tensor_parallel.py: each chip holds an equal share of
the GDN value heads with their q/k heads, of the attention q heads with their kv heads, of the MLP width
and of the vocabulary), so one chip's programs are timed as the single-chip bench times a whole model
(bench/ttft.py over the plan's chip config, with the shapes of the collective scheme, EngineOptions.tp_scheme:
under "reduce_scatter" the norms, residual adds and embeddings on the chip's rows of the tokens, the LM head on
the gathered tile rows; tensor_parallel_device.CollectiveShapes) and the split's collectives are added, each
timed by the
Ethernet model (device/mesh_timing.py via tensor_parallel.collective_times: the links and the workers'
path to them, versioned apart from the chip's timing model as mesh_timing_version). Collectives do not
overlap compute (mesh_timing says why), so the two add; with options.micro_batches 2 each chunk runs as two
micro-batches whose collectives run on a sub-device of their own beside the other micro-batch's programs, on the
grid the collectives' cores leave (device/sub_device_timing.py, bench/ttft_micro.py), and only what the
programs wait for adds. The host transfers (each chip's embeddings and GDN
state share, the gathered logits row) are timed over the cards' PCIe links by device/host_link.py, the second
chip of each n300 through the first's Ethernet, beside the programs and collectives (bench/ttft.py's timeline,
each layer's collectives placed after its mixer and its MLP as they run); what the chips wait for adds.
Everything is modeled.
"""

from __future__ import annotations


def mesh_ttft_bench(model: str, seq: int, mesh: tuple[int, int], topology: str = "line",
                    weight_format: str | None = None, costs: str | None = None, options=None,
                    fused_collectives: str = "none") -> dict:
    """`fused_collectives` (bench/fused_pairs.py FUSED_MODES): "none", what the card path runs; "fused" or
    "faster": the reduce_scatter scheme's matmul + collective pairs timed as ttnn's fused ops (which need the
    residual stream split by features, not tokens: the chips' programs stay the token split's, the same work
    a chip, and the feature split's norm-statistics gathers are added), fused wherever ttnn runs them on the mesh
    or each the faster way."""
    from ttprefill.device.sim_device import DEFAULT_COST_SETTING
    from ttprefill.model.config import get_preset
    from ttprefill.model.tensor_parallel import TensorParallelPlan, collective_times, per_chip_ops
    from ttprefill.model.tensor_parallel_device import CollectiveShapes
    from ttprefill.options import EngineOptions

    from .fused_pairs import FusedLayerCollectives, check_fused_bench
    from .ttft import ttft_bench

    rows, cols = mesh
    tp = rows * cols
    full = get_preset(model)
    costs = costs or DEFAULT_COST_SETTING
    scheme = (options or EngineOptions()).tp_scheme
    dtype = (options or EngineOptions()).collective_dtype  # the format each kind of collective carries
    micro = (options or EngineOptions()).micro_batches > 1
    if micro and fused_collectives != "none":
        raise ValueError("--micro-batches 2 schedules the plain collectives beside the programs; give "
                         "--fused-collectives none with it")
    check_fused_bench((rows, cols), scheme, fused_collectives, dtype)
    chip = TensorParallelPlan(full, tp).chip_config(0)  # refuses, naming the sizes that work, a split that fails

    def seconds(ops, layers, head=()):  # the collectives of `layers` (and the head's), timed on their own
        if not any(layer["collectives"] for layer in layers) and not head:
            return 0.0
        one = {**ops, "chunks": [{**ops["chunks"][0], "layers": layers}], "head": {"ops": [], "collectives": head}}
        return collective_times(one, (rows, cols), topology, costs=costs)["seconds"]

    by_tokens: dict[int, list[tuple[float, float]]] = {}

    def layer_collectives_s(T: int) -> list[tuple[float, float]]:
        """Each layer's collectives at a chunk of T tokens: (after its mixer, after its MLP), in seconds."""
        if T not in by_tokens:
            ops = per_chip_ops(full, tp, T, T, scheme, collective_dtype=dtype)
            by_tokens[T] = [
                tuple(seconds(ops, [{**layer, "collectives": [c for c in layer["collectives"] if c["block"] == block]}])
                      for block in ("mixer", "mlp"))
                for layer in ops["chunks"][0]["layers"]]
        return by_tokens[T]

    mb_tokens: list[int] = []  # every micro-batch's tokens, chunk by chunk, as the bench asks for them
    by_mb_tokens: dict[int, tuple[dict, list]] = {}

    def block_collectives_s(T: int):
        """Each layer's ((before, after) its mixer, (before, after) its MLP) collective seconds at a micro-batch of
        T tokens: the all_gathers that feed a block, and the reductions that end it."""
        mb_tokens.append(T)
        if T not in by_mb_tokens:
            ops = per_chip_ops(full, tp, T, T, scheme, collective_dtype=dtype)
            layers = ops["chunks"][0]["layers"]

            def part(layer, block, before):
                picked = [c for c in layer["collectives"]
                          if c["block"] == block and (c["kind"] == "all_gather") == before]
                return seconds(ops, [{**layer, "collectives": picked}]) if picked else 0.0

            by_mb_tokens[T] = (ops, [tuple((part(layer, b, True), part(layer, b, False)) for b in ("mixer", "mlp"))
                                     for layer in layers])
        return by_mb_tokens[T][1]

    fused = None
    if fused_collectives != "none":
        from ttprefill.ops.linear.weight_formats import WeightFormats

        o = options or EngineOptions()
        fused = FusedLayerCollectives(full, tp, topology, WeightFormats.parse(weight_format or o.weight_format), costs,
                                      fused_collectives, o.matmul_fidelity)
    whole = per_chip_ops(full, tp, seq, (options or EngineOptions()).tokens_per_chunk, scheme, collective_dtype=dtype)
    head_s = seconds(whole, [], whole["head"]["collectives"])
    run = ttft_bench(model, seq, weight_format, costs, options, config=chip, chips=tp,
                     layer_collectives_s=fused or layer_collectives_s, head_collectives_s=head_s,
                     split=CollectiveShapes(chip, tp, scheme, dtype),
                     block_collectives_s=block_collectives_s if micro else None)
    timed = collective_times(whole, (rows, cols), topology, costs=costs)
    if micro:  # the micro-batches' collectives, and the head's
        mb_ops = [by_mb_tokens[T][0] for T in mb_tokens]
        timed = collective_times({**whole, "chunks": [c for ops in mb_ops for c in ops["chunks"]]},
                                 (rows, cols), topology, costs=costs)
    host = run["host_transfer"]
    by_op = dict(run["by_op"])
    collectives_s = timed["seconds"]
    if fused is not None:  # the pairs' seconds beyond the chip's programs, and the head's collectives as they were
        collectives_s = fused.prompt_seconds([c["tokens"] for c in run["chunks"]]) + head_s
    exposed_s = collectives_s
    if micro:  # what of the layers' collectives the compute sub-device waited for, and the head's
        exposed_s = run["collective_schedule"]["exposed_s"] + head_s
        run["collective_schedule"]["collectives_s"] = collectives_s
    by_op["collectives"] = exposed_s
    ttft = run["device_s"] + exposed_s + host["exposed_s"]
    return {
        **run,
        "mesh": [rows, cols], "topology": topology, "tp": tp, "scheme": scheme, "collective_dtype": str(dtype),
        "ttft_s": ttft, "by_op": by_op, "chip_compute_s": run["device_s"],
        "collectives_by_kind": timed["by_kind"], "collective_share": exposed_s / ttft,
        "collectives_s": collectives_s, "collectives_exposed_s": exposed_s,
        "collectives_hidden_s": collectives_s - exposed_s,
        "mesh_timing_version": timed["mesh_timing_version"], "fused_collectives": fused_collectives,
        **({"fused_pairs": {str(t): p["layers"] for t, p in fused.pairs.items()}} if fused is not None else {}),
        "note": (f"modeled: one chip's programs of a {tp}-way tensor-parallel split (every chip runs the same "
                 "shapes), timed as the single-chip bench does, plus the split's collectives by the Ethernet model "
                 + ("scheduled beside the other micro-batch's programs on the compute sub-device "
                    f"({run['collective_schedule']['compute_cores']} cores, the matmuls on its whole rows "
                    f"{run['collective_schedule']['compute_grid'][0]}x{run['collective_schedule']['compute_grid'][1]}"
                    "; device/sub_device_timing.py), " if micro else "not overlapped with compute, ")
                 + "and the host transfers of every chip over the cards' PCIe links beside both. "
                 + run["note"]),
    }
