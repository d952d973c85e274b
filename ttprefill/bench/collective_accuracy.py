"""Accuracy of bfp8 collectives (EngineOptions.collective_dtype), measured on the simulator against fp64.

    .venv/bin/python -m ttprefill.bench.collective_accuracy [--json]

Two studies:

- end to end: the tiny model (random weights, 150 tokens in chunks of 64) prefilled tensor-parallel on a
  simulated n300 (SimMesh 1x2, reduce_scatter scheme) with each choice of what the gather and the reduction
  carry; its last-token logits against transformers in fp64 (the reference stack where transformers is not
  installed) and against the same run on one chip. The gate the engine is held to: relative RMS <= 0.03.
- per projection, at Qwen3.5-9B's hidden width (4096) on random activations of a normed row's scale: the
  column-parallel projection of the gathered rows with in0 bf16 or bfp8 (weights bfp8, the engine's), and the
  two-chip sum of a row-parallel projection's partial outputs (down_proj-like, K 6144 a chip) with the partials
  and their reduction in bf16 or bfp8; each against fp64 of the same (unrounded) inputs.
"""

from __future__ import annotations

import time

import numpy as np

CHOICES = ("gather=bf16,reduce=bf16", "gather=bfp8,reduce=bf16", "gather=bf16,reduce=bfp8", "gather=bfp8,reduce=bfp8")


def end_to_end_study(choices=CHOICES, tokens: int = 150, chunk: int = 64, seed: int = 5) -> dict:
    from ttprefill.bench.fidelity_accuracy import oracle_logits
    from ttprefill.device.mesh import SimMesh
    from ttprefill.engine import Engine
    from ttprefill.model.collective_dtype import CollectiveDtype
    from ttprefill.model.config import get_preset
    from ttprefill.model.weights import random_weights
    from ttprefill.options import EngineOptions
    from ttprefill.reference.metrics import pcc, rel_rms

    config = get_preset("tiny")
    weights = random_weights(config, seed=seed)
    prompt = np.random.default_rng(8).integers(0, config.vocab_size, tokens).tolist()
    oracle, oracle_name = oracle_logits(config, weights, prompt)
    one_chip = np.asarray(Engine(config, weights, backend="sim", options=EngineOptions(chunk_tokens=chunk))
                          .prefill(prompt).last_logits, np.float64)
    rows = [{"setting": "one chip", "pcc": pcc(oracle, one_chip), "rel_rms": rel_rms(oracle, one_chip)}]
    for spec in choices:
        t0 = time.perf_counter()
        options = EngineOptions(chunk_tokens=chunk, tp_scheme="reduce_scatter",
                                collective_dtype=CollectiveDtype.parse(spec))
        out = np.asarray(Engine(config, weights, backend="sim", options=options, device=SimMesh((1, 2)))
                         .prefill(prompt).last_logits, np.float64)
        rows.append({"setting": f"1x2 {spec}", "pcc": pcc(oracle, out), "rel_rms": rel_rms(oracle, out),
                     "rel_rms_vs_one_chip": rel_rms(one_chip, out),
                     "argmax_agrees": bool(np.argmax(out) == np.argmax(oracle)), "wall_s": time.perf_counter() - t0})
    return {"model": "tiny", "tokens": tokens, "chunk_tokens": chunk, "weights": f"random_weights(seed={seed})",
            "oracle": oracle_name, "rows": rows}


def projection_study(rows: int = 64, hidden: int = 4096, n_out: int = 256, k_partial: int = 6144,
                     seed: int = 7) -> dict:
    from ttprefill.device.mesh import SimMesh
    from ttprefill.device.program import DataFormat
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.ops.linear.linear import DenseWeight, linear
    from ttprefill.reference.metrics import rel_rms

    bf16, bfp8 = DataFormat.Float16_b, DataFormat.Bfp8_b
    rng = np.random.default_rng(seed)
    out = {"shape": {"rows": rows, "hidden": hidden, "gather_n_out": n_out, "reduce_k_per_chip": k_partial},
           "weights": "bfp8", "fidelity": "HiFi2"}

    # gather: normed rows (RMS 1 a row, a zero-centred norm weight's spread) into a column-parallel projection
    sim = SimDevice()
    h = (rng.standard_normal((rows, hidden)) * (1 + 0.2 * rng.standard_normal(hidden))).astype(np.float32)
    w = (rng.standard_normal((n_out, hidden)) / np.sqrt(hidden)).astype(np.float32)
    exact = h.astype(np.float64) @ w.T.astype(np.float64)
    weight = DenseWeight.upload(sim, w, bfp8)
    gather = {}
    for name, fmt in (("bf16", bf16), ("bfp8", bfp8)):
        x = sim.upload(h, fmt)
        y = linear(sim, x, weight)
        gather[name] = rel_rms(exact, sim.download(y))
        sim.free(x)
        sim.free(y)
    weight.free()
    out["gather_projection_rel_rms"] = gather

    # reduce: two chips' partial outputs of a row-parallel projection, reduce-scattered over the tokens
    mesh = SimMesh((1, 2))
    a = [(rng.standard_normal((rows, k_partial)) * 0.5).astype(np.float32) for _ in range(2)]
    wd = [(rng.standard_normal((hidden // 8, k_partial)) / np.sqrt(2 * k_partial)).astype(np.float32)
          for _ in range(2)]
    exact = sum(ai.astype(np.float64) @ wi.T.astype(np.float64) for ai, wi in zip(a, wd))
    reduce = {}
    for name, fmt in (("bf16", bf16), ("bfp8", bfp8)):
        partials = []
        for chip, (ai, wi) in enumerate(zip(a, wd)):
            dev = mesh.chips[chip]
            x, wt = dev.upload(ai, bf16), DenseWeight.upload(dev, wi, bfp8)
            y = linear(dev, x, wt, out_format=fmt, fp32_acc=fmt is bfp8)
            partials.append(dev.download(y))
            for t in (x, y):
                dev.free(t)
            wt.free()
        from ttprefill.device.mesh import shard_placements

        t = mesh.upload(np.concatenate(partials), fmt, shard_placements(0))
        total = mesh.reduce_scatter(t, 0, cluster_axis=1)
        reduce[name] = rel_rms(exact, np.concatenate(mesh.download_shards(total)))
        mesh.free(t)
        mesh.free(total)
    out["reduce_sum_rel_rms"] = reduce
    return out


def format_study(result: dict) -> str:
    lines = []
    if "end_to_end" in result:
        e = result["end_to_end"]
        lines.append(f"tiny model, {e['tokens']} tokens, chunks of {e['chunk_tokens']}, against {e['oracle']}:")
        for r in e["rows"]:
            extra = f"  vs one chip {r['rel_rms_vs_one_chip']:.4f}" if "rel_rms_vs_one_chip" in r else ""
            lines.append(f"  {r['setting']:<32} pcc {r['pcc']:.6f}  rel RMS {r['rel_rms']:.4f}{extra}")
    if "projections" in result:
        p = result["projections"]
        lines.append(f"per projection at hidden {p['shape']['hidden']} ({p['shape']['rows']} rows), rel RMS vs fp64:")
        lines.append("  column-parallel projection, in0 " + ", ".join(
            f"{k} {v:.4f}" for k, v in p["gather_projection_rel_rms"].items()))
        lines.append("  two-chip reduce-scatter of partial sums " + ", ".join(
            f"{k} {v:.4f}" for k, v in p["reduce_sum_rel_rms"].items()))
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--skip-end-to-end", action="store_true")
    args = parser.parse_args(argv)
    result = {"note": "simulated numerics against fp64; modeled device, measured on the simulator",
              "projections": projection_study()}
    if not args.skip_end_to_end:
        result["end_to_end"] = end_to_end_study()
    print(json.dumps(result) if args.json else format_study(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
