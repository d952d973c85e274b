"""The matmul + collective pairs of a tensor-parallel prefill timed as ttnn's fused ops (modeled).

ttnn 0.81.1 fuses a row-parallel matmul with the reduce-scatter of its output
(ttnn.experimental.matmul_reduce_scatter_async) and an all-gather with the column-parallel matmul that reads
it (all_gather_matmul_async). Both require the collective on dim 3, the features: they apply to a split in
which the residual stream between blocks is sharded by its hidden columns, not by tokens. This module times
that split's pairs on one chip:

- the matmul of each pair is run by the simulator (timing-only, the mirrored 2D-multicast matmul) twice: on
  the whole grid, as the unfused pair runs it, and on the grid the fused op leaves it
  (mesh_timing.fused_matmul_grid: the collective's workers and mux cores take two rows);
- each row-parallel matmul + reduce-scatter runs with its input cut into `batches` (input [B, 1, T/B, K]),
  the only way its reduce-scatter overlaps the matmul; the batch count with the shortest modeled op is used
  (a caller's choice on a card), and one batch is always among those tried;
- each all-gather before a column-parallel block is fused with the block's first projection (the op takes one
  weight; the block's other projections read the gathered tensor it returns, unchanged);
- an RMSNorm of a feature-split row needs the row's sum of squares from every chip: ttnn's distributed norm
  (rms_norm_pre_all_gather, an all-gather of one tile column of statistics a chip, rms_norm_post_all_gather)
  adds that small all-gather before each fused all-gather; it is charged as a collective of its own.

`pair_times` returns, per layer kind and chunk length, what each pair costs beyond its matmul on the whole
grid (the unfused bench already counts that matmul in the chip's programs), fused and unfused. Everything is
modeled.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.program import DataFormat, MathFidelity

# The batch counts tried for a fused matmul + reduce-scatter (each batch a whole number of tile rows).
RS_BATCH_CHOICES = (1, 2, 4, 8)
# ttnn's rms_norm_pre_all_gather leaves one tile column of statistics a row on each chip.
NORM_STATS_COLUMNS = 32
# The row-parallel projections (their output's partial sums are reduce-scattered) and, for each block, the
# column-parallel projection the all-gather before it is fused with.
ROW_PARALLEL = ("o_proj", "out_proj", "down_proj")
FIRST_COLUMN_PARALLEL = {"attention": "qkv_proj", "gdn": "in_proj_qkv", "mlp": "gate_up_proj"}
# each of those projections' role, for its math fidelity (ops/linear/fidelity.py)
FIDELITY_ROLE = {"qkv_proj": "attention_in", "o_proj": "attention_out", "in_proj_qkv": "gdn_in",
                 "out_proj": "gdn_out", "gate_up_proj": "mlp_gate_up", "down_proj": "mlp_down"}


@dataclass(frozen=True)
class MatmulRun:
    seconds: float
    output_blocks: int  # row slabs: output blocks each core computes one after another


def simulated_matmul(m: int, k: int, n: int, weight_format: DataFormat, grid: tuple[int, int],
                     costs: str, fidelity: MathFidelity | None = None, _cache: dict = {}) -> MatmulRun:
    """[m, k] @ [k, n] on the simulator (timing-only), planned for `grid` (columns, rows), in the column chunks
    the device stack's weights take; modeled seconds."""
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.hw import CLOCK_HZ
    from ttprefill.ops.linear.linear import ChunkedDenseWeight, linear
    from ttprefill.ops.linear.planner import DEFAULT_FIDELITY, plan_linear
    from ttprefill.ops.linear.shapes import LinearShape

    fidelity = fidelity or DEFAULT_FIDELITY
    key = (m, k, n, weight_format, tuple(grid), costs, fidelity)
    if key in _cache:
        return _cache[key]
    device = SimDevice(timing_only=True, costs=costs)
    x = device.allocate((m, k), DataFormat.Float16_b)
    weight = ChunkedDenseWeight.allocate(device, k, n, weight_format)
    cycles, blocks = 0, 0
    for chunk in weight.chunks:
        plan = plan_linear(LinearShape(m, k, chunk.n_out, weight_format), grid=tuple(grid), fidelity=fidelity)
        reports: list = []
        out = linear(device, x, chunk, plan=plan, reports=reports)
        device.free(out)
        cycles += sum(r.cycles for r in reports)
        blocks = max(blocks, plan.num_slabs)
    _cache[key] = MatmulRun(cycles / CLOCK_HZ, blocks)
    return _cache[key]


def _extra(pair: dict, mode: str) -> float:
    """What a pair costs beyond its matmul on the whole grid when run `mode`: "fused" (fused wherever ttnn can
    run it fused on this mesh), "unfused", or "faster" (of what ttnn can run, the faster way; a choice the
    caller makes per pair)."""
    if pair["ttnn_runs_fused"] and (mode == "fused" or (mode == "faster" and pair["fused_is_faster"])):
        return pair["fused_extra_s"]
    return pair["unfused_extra_s"]


def _ttnn_runs_fused(what: str, tp: int, topology: str) -> bool:
    """Whether ttnn 0.81.1 runs this fused op on a 1 x tp mesh (device/fused_ccl.py check_mesh)."""
    from ttprefill.device.fused_ccl import FusedOpRefused, check_mesh

    try:
        check_mesh((1, tp), topology, what)
    except FusedOpRefused:
        return False
    return True


def _matmuls(ops: list[dict]) -> dict[str, dict]:
    return {op["name"]: op for op in ops if op["op"] == "matmul"}


def _block_pairs(kind: str, matmuls: dict[str, dict], mixer: bool) -> tuple[dict, dict]:
    """(the block's first column-parallel projection, its row-parallel one)."""
    if mixer:
        return matmuls[FIRST_COLUMN_PARALLEL[kind]], matmuls["o_proj" if kind == "attention" else "out_proj"]
    return matmuls[FIRST_COLUMN_PARALLEL["mlp"]], matmuls["down_proj"]


def pair_times(config, tp: int, tokens: int, topology: str, weight_format, costs: str,
               links: int | None = None, fidelity=None) -> dict:
    """Per layer kind ("gdn", "attention") at a chunk of `tokens` tokens on a 1 x tp mesh (the fused ops take no
    cluster axis): each block's pairs (its entry all-gather + first projection, its row-parallel projection +
    reduce-scatter) timed fused and unfused, and what the block's and the layer's collectives cost beyond their
    matmuls on the whole grid, with the feature split's norm-statistics gathers, for each way of running the
    pairs: "fused_extra_s" (every pair ttnn runs fused on this mesh fused; `ttnn_runs_fused` says which),
    "unfused_extra_s" (none), "faster_extra_s" (of what ttnn runs, each pair the faster way). A pair ttnn cannot
    fuse (the gather on a line or a mesh of two) is still timed as if it could, for comparison. `fidelity` (an
    ops.linear.fidelity.ProjectionFidelity; None: the engine's defaults) sets each projection's math fidelity,
    as the chip's programs run it; `weight_format`, a DataFormat for every projection or an
    ops.linear.weight_formats.WeightFormats (each role's), their weights' format. Modeled."""
    from ttprefill.device import mesh_timing as mt
    from ttprefill.hw import ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR, GRID_X, GRID_Y
    from ttprefill.model.tensor_parallel import ACTIVATION_BYTES, per_chip_ops

    links = ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR if links is None else links
    ring = topology if tp > 2 else mt.LINE
    whole_grid, fused_grid = (GRID_X, GRID_Y), mt.fused_matmul_grid(links)
    ops = per_chip_ops(config, tp, tokens, tokens, scheme="reduce_scatter")
    hidden, T = config.hidden_size, tokens
    partial = T * hidden * ACTIVATION_BYTES  # a row-parallel projection's output a chip
    shard = partial // tp  # a chip's feature columns of the residual stream
    runs_fused = {what: _ttnn_runs_fused(what, tp, topology) for what in mt.FUSED_KINDS}
    stats = mt.collective_time("all_gather", T * NORM_STATS_COLUMNS * ACTIVATION_BYTES, tp, ring, links, costs)

    from ttprefill.ops.linear.fidelity import ProjectionFidelity

    fidelity = fidelity if fidelity is not None else ProjectionFidelity()

    from ttprefill.ops.linear.weight_formats import WeightFormats

    # one format for every projection, or each role's (a WeightFormats)
    formats = weight_format if isinstance(weight_format, WeightFormats) else WeightFormats.uniform(weight_format)

    def mm(op, grid, rows=None):
        role = FIDELITY_ROLE[op["name"]]
        return simulated_matmul(rows or op["m"], op["k"], op["n"], formats.of(role), grid, costs, fidelity.of(role))

    out = {}
    for layer in ops["chunks"][0]["layers"]:
        kind = layer["kind"]
        if kind in out:
            continue
        matmuls = _matmuls(layer["ops"])
        blocks = {}
        for block, mixer in (("mixer", True), ("mlp", False)):
            first, row = _block_pairs(kind, matmuls, mixer)
            full_first, fused_first = mm(first, whole_grid), mm(first, fused_grid)
            ag = mt.all_gather_matmul_time(fused_first.seconds, shard, tp, ring, links, costs,
                                           output_blocks=fused_first.output_blocks,
                                           serial_matmul_s=full_first.seconds)
            full_row = mm(row, whole_grid)
            tries = []
            for batches in RS_BATCH_CHOICES:
                if T % (32 * batches):  # each batch whole tile rows
                    continue
                one = mm(row, fused_grid, rows=T // batches)
                tries.append(mt.matmul_reduce_scatter_time(one.seconds, batches, partial, tp, ring, links, costs,
                                                           serial_matmul_s=full_row.seconds))
            rs = min(tries, key=lambda f: f.seconds)
            pairs = {"all_gather_matmul": (first["name"], ag, full_first.seconds, {}),
                     "matmul_reduce_scatter": (row["name"], rs, full_row.seconds,
                                               {"batches_tried": [f.slices for f in tries]})}
            entry = {}
            for what, (name, fused, serial_matmul_s, extra) in pairs.items():
                fused_extra = fused.seconds - serial_matmul_s  # beyond the matmul the chip's programs count
                entry[what] = {"projection": name, **fused.as_dict(), **extra, "fused_extra_s": fused_extra,
                               "unfused_extra_s": fused.collective_s, "ttnn_runs_fused": runs_fused[what],
                               "fused_is_faster": fused_extra < fused.collective_s}
            # a feature-split norm gathers its rows' statistics whether or not the gather after it is fused
            entry["norm_stats_all_gather_s"] = stats.seconds
            for mode in ("fused", "unfused", "faster"):
                entry[f"{mode}_extra_s"] = stats.seconds + sum(
                    _extra(entry[what], mode) for what in pairs)
            blocks[block] = entry
        out[kind] = {"blocks": blocks, **{f"{mode}_extra_s": sum(b[f"{mode}_extra_s"] for b in blocks.values())
                                          for mode in ("fused", "unfused", "faster")}}
    return {"modeled": True, "tokens": T, "tp": tp, "topology": ring, "links": links, "costs": costs,
            "matmul_grid_fused": list(fused_grid), "weight_format": formats.describe(),
            "mesh_timing_version": mt.MESH_TIMING_VERSION, "layers": out}


FUSED_MODES = ("none", "fused", "faster")  # bench ttft --mesh --fused-collectives; "none" is what the card runs


def check_fused_bench(mesh: tuple[int, int], scheme: str, mode: str, collective_dtype=None) -> None:
    """Refuses, saying what to use, a bench that asks for fused pairs where there are none to fuse, or with
    collectives in a format the pairs are not timed in (pair_times moves bf16: ACTIVATION_BYTES a value).
    collective_dtype: a model.collective_dtype.CollectiveDtype (None: not checked)."""
    if mode not in FUSED_MODES:
        raise ValueError(f"unknown fused-collectives mode {mode!r}; choose one of {', '.join(FUSED_MODES)}")
    if mode == "none":
        return
    rows, cols = mesh
    if rows > 1 and cols > 1:
        raise ValueError(f"ttnn 0.81.1's fused matmul + collective ops take no cluster axis: open the {rows}x{cols} "
                         f"mesh as 1x{rows * cols} (a T3000: --mesh 1x8 --topology ring)")
    if scheme != "reduce_scatter":
        raise ValueError("--fused-collectives pairs each reduce-scatter and all-gather with its matmul: it needs "
                         "--scheme reduce_scatter (the all_reduce scheme has no such pairs)")
    from ttprefill.model.collective_dtype import KINDS

    if collective_dtype is not None and any(getattr(collective_dtype, kind) != "bf16" for kind in KINDS):
        raise ValueError(f"--fused-collectives times the fused pairs' collectives in bf16, but the collectives carry "
                         f"{collective_dtype}: give --collective-dtype bf16 with it (or --fused-collectives none)")


class FusedLayerCollectives:
    """bench ttft --mesh's per-layer collective time with the pairs run `mode` ("fused" or "faster"), as the bench's
    timeline takes it: per layer of a chunk of T tokens, (after its mixer, after its MLP) in seconds beyond the
    chip's programs; and a prompt's total."""

    def __init__(self, config, tp: int, topology: str, weight_format, costs: str, mode: str,
                 fidelity=None):
        self.config, self.tp, self.topology = config, tp, topology
        self.weight_format, self.costs, self.mode, self.fidelity = weight_format, costs, mode, fidelity
        self.pairs: dict[int, dict] = {}

    def _layers(self, tokens: int) -> dict:
        if tokens not in self.pairs:
            self.pairs[tokens] = pair_times(self.config, self.tp, tokens, self.topology, self.weight_format,
                                            self.costs, fidelity=self.fidelity)
        return self.pairs[tokens]["layers"]

    def __call__(self, tokens: int) -> list[tuple[float, float]]:
        layers = self._layers(tokens)
        out = []
        for i in range(self.config.num_layers):
            blocks = layers["attention" if self.config.is_attention_layer(i) else "gdn"]["blocks"]
            out.append(tuple(blocks[b][f"{self.mode}_extra_s"] for b in ("mixer", "mlp")))
        return out

    def prompt_seconds(self, chunk_tokens: list[int]) -> float:
        return sum(sum(m + p for m, p in self(tokens)) for tokens in chunk_tokens)


# The meshes the fused ops run on (1-D: they take no cluster axis): Qwen3.5-9B on an n300, 27B on a T3000 as 1x8.
FUSED_MESHES = (("qwen3.5-9b", 2, "line"), ("qwen3.5-27b", 8, "ring"))


def prompt_totals(model: str, tp: int, topology: str, seq: int, chunk: int, weight_format: DataFormat,
                  costs: str) -> dict:
    """A whole prompt's collective time (seconds beyond the chips' programs) under each way of running the
    pairs, beside the all_reduce and token-split schemes' collectives as tensor_parallel.collective_times times
    them; modeled."""
    from ttprefill.model.config import get_preset
    from ttprefill.model.tensor_parallel import collective_times, per_chip_ops

    cfg = get_preset(model)
    by_tokens: dict[int, dict] = {}
    totals = {"fused": 0.0, "unfused": 0.0, "faster": 0.0}
    for start in range(0, seq, chunk):
        T = min(chunk, seq - start)
        if T not in by_tokens:
            by_tokens[T] = pair_times(cfg, tp, T, topology, weight_format, costs)
        layers = by_tokens[T]["layers"]
        for mode in totals:
            totals[mode] += (len(cfg.gdn_layers) * layers["gdn"][f"{mode}_extra_s"]
                             + len(cfg.attention_layers) * layers["attention"][f"{mode}_extra_s"])
    schemes = {scheme: collective_times(per_chip_ops(cfg, tp, seq, chunk, scheme), (1, tp), topology,
                                        costs=costs)["seconds"] for scheme in ("all_reduce", "reduce_scatter")}
    return {"model": model, "mesh": [1, tp], "topology": topology, "seq": seq, "chunk": chunk, "costs": costs,
            "layer_collectives_s": {f"features_split_{mode}": s for mode, s in totals.items()},
            "scheme_collectives_s": schemes, "pairs_by_chunk_tokens": by_tokens}


def main(argv=None) -> None:
    """Print the fused pairs and a whole prompt's totals for the published 1-D meshes (JSON, modeled)."""
    import argparse
    import json

    parser = argparse.ArgumentParser(description="tensor-parallel matmul + collective pairs as ttnn's fused ops")
    parser.add_argument("--seq", type=int, default=32768)
    parser.add_argument("--chunk", type=int, default=2048)
    parser.add_argument("--costs", default="central")
    parser.add_argument("--model", default=None, help="one of the meshes' models only")
    args = parser.parse_args(argv)
    runs = [prompt_totals(model, tp, topology, args.seq, args.chunk, DataFormat.Bfp8_b, args.costs)
            for model, tp, topology in FUSED_MESHES if args.model in (None, model)]
    print(json.dumps({"what": "matmul + collective pairs as ttnn's fused ops, modeled (bench/fused_pairs.py)",
                      "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
