"""Modeled cycles of the MLP's gate and up projections and their SwiGLU, per program, in three forms:

    separate  gate_proj and up_proj as two dense matmuls over the same x, then silu_mul (ops/eltwise) reading both
              [T, I] outputs and writing one: what the device stack ran before the fused op
    merged    one dense matmul over the paired weight [K, 2 I] (writing [T, 2 I]); a silu_mul pass on its
              columns would come on top (the fallback form, not run by the stack)
    fused     the paired weight's matmul with the SwiGLU applied in DST before packing (ops/linear/swiglu.py):
              what the stack runs

Timing-only simulator runs (no arithmetic; every CB, NoC and DRAM transfer and cost), modeled cycles at the
timing model's clock. Shapes: T tokens, K = hidden, I = the chip's share of the MLP width.

    python -m ttprefill.bench.mlp_gate_up [--json]    (9B on an n300's chip, 9B on one chip, 27B on a T3000 chip)
"""

from __future__ import annotations

import argparse
import json

from ttprefill.device.program import DataFormat, MathFidelity

BF16, BFP8 = DataFormat.Float16_b, DataFormat.Bfp8_b
# (label, T, K, I per chip): 9B hidden 4096 MLP 12288 (tp 2: 6144); 27B hidden 5120 MLP 17408 (tp 8: 2176)
SHAPES = (("qwen3.5-9b tp2 (n300 chip)", 2048, 4096, 6144), ("qwen3.5-9b one chip", 2048, 4096, 12288),
          ("qwen3.5-27b tp8 (T3000 chip)", 2048, 5120, 2176))


def measure(tokens: int, k: int, inter: int, weight_format: DataFormat = BFP8,
            fidelity: MathFidelity = MathFidelity.HiFi2, costs: str = "central") -> dict:
    """{form: {"programs": [cycles, ...], "cycles": total}} for one shape."""
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.ops.eltwise import silu_mul
    from ttprefill.ops.linear import DenseWeight, linear
    from ttprefill.ops.linear.swiglu import linear_swiglu, paired_width

    device = SimDevice(timing_only=True, costs=costs)
    x = device.allocate((tokens, k), BF16)
    out = {}

    def run(name, fn):
        reports, made = [], []
        fn(reports, made)
        for t in made:
            device.free(t) if not isinstance(t, DenseWeight) else t.free()
        out[name] = {"programs": [r.cycles for r in reports], "names": [r.program for r in reports],
                     "cycles": sum(r.cycles for r in reports)}

    def separate(reports, made):
        gw, uw = (DenseWeight(device.allocate((k, inter), weight_format), k, inter) for _ in range(2))
        g = linear(device, x, gw, fidelity=fidelity, reports=reports)
        u = linear(device, x, uw, fidelity=fidelity, reports=reports)
        silu_mul(device, g, u, out=g, reports=reports)
        made.extend([gw, uw, g, u])

    def merged(reports, made):
        w = DenseWeight(device.allocate((k, paired_width(inter)), weight_format), k, paired_width(inter))
        made.extend([w, linear(device, x, w, fidelity=fidelity, reports=reports)])

    def fused(reports, made):
        w = DenseWeight(device.allocate((k, paired_width(inter)), weight_format), k, paired_width(inter))
        made.extend([w, linear_swiglu(device, x, w, device.allocate((tokens, inter), BF16), fidelity=fidelity,
                                      reports=reports)])

    for name, fn in (("separate", separate), ("merged", merged), ("fused", fused)):
        run(name, fn)
    device.free(x)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = []
    for label, T, K, inter in SHAPES:
        r = measure(T, K, inter)
        results.append({"shape": label, "tokens": T, "k": K, "intermediate_per_chip": inter,
                        "weights": "bfp8", "fidelity": "HiFi2", "modeled": True, **r})
        if not args.json:
            print(f"{label}: T {T}, K {K}, I {inter} (bfp8 weights, HiFi2; modeled cycles)")
            for form in ("separate", "merged", "fused"):
                print(f"  {form:9s} {r[form]['cycles']:>12,d}  = {' + '.join(f'{c:,d}' for c in r[form]['programs'])}")
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
