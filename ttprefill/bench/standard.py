"""The standard benchmark set behind scripts/bench: runs the kernels at full size in the simulator's
timing-only mode, writes every result as JSON and draws the plots (PNG).

Every device figure here is MODELED by the simulator's timing model (docs/TIMING.md; its version is in
the JSON), at the central cost setting unless a band (low / central / high) is given. Comparisons are
like for like: our kernels against tt-metal's own kernels for the same shapes on the same model
(`--peer`), never against host-timed whole layers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from loguru import logger

from .options import AttentionBenchArgs, DeviceChoice, GdnBenchArgs, MatmulBenchArgs

# tt-metal models/demos/blackhole/qwen36/README-N300-9B.md (measured, batch 1).
PUBLISHED_QWEN35_9B_N300_TTFT_S = {4096: 0.95, 8192: 1.95, 16384: 3.97, 32768: 8.33, 65536: 18.66, 131072: 33.5}


TIMING_ONLY = DeviceChoice(backend="sim", timing_only=True)


def attention_sweep(contexts, shapes) -> list[dict]:
    from .attention import attention_bench

    out = []
    for hq, hkv, d in shapes:
        for seq in contexts:
            t0 = time.perf_counter()
            r = attention_bench(AttentionBenchArgs(seq, hq, hkv, d, fidelity="HiFi2", check="no", device=TIMING_ONLY))
            logger.info("attention {}/{} d{} seq {}: {:.1%} FPU (modeled), {:.1f} s wall", hq, hkv, d, seq,
                        r["fpu_util"], time.perf_counter() - t0)
            out.append(r)
    return out


def gdn_sweep(contexts, qk_heads, v_heads, key_dim, value_dim, batch=1) -> list[dict]:
    from .gdn import gdn_bench

    out = []
    for seq in contexts:
        t0 = time.perf_counter()
        r = gdn_bench(GdnBenchArgs(seq=seq, qk_heads=qk_heads, v_heads=v_heads, key_dim=key_dim,
                                   value_dim=value_dim, batch=batch, device=TIMING_ONLY))
        logger.info("gdn {}/{} K{} V{} x{} seq {}: {:.3f} ms modeled, {:.1f} s wall", qk_heads, v_heads, key_dim,
                    value_dim, batch, seq, r["modeled_s"] * 1e3, time.perf_counter() - t0)
        out.append(r)
    return out


def peer_sweep(contexts) -> dict:
    """Our kernels beside tt-metal's, banded over the cost settings (ttprefill.peers)."""
    from ttprefill import peers

    out: dict = {"gdn_27b": [], "attention_27b": []}
    for seq in contexts:
        out["gdn_27b"].append(peers.gdn_with_peer(GdnBenchArgs(seq=seq, qk_heads=16, v_heads=48, key_dim=128,
                                                               value_dim=128, device=TIMING_ONLY)))
        logger.info("gdn peer seq {}: speedup {:.2f} (central)", seq, out["gdn_27b"][-1]["speedup"])
        try:
            out["attention_27b"].append(peers.attention_with_peer(AttentionBenchArgs(
                seq, 24, 4, 256, fidelity="HiFi2", check="no", device=TIMING_ONLY)))
        except Exception as e:  # tt-metal's sdpa compute kernel does not compile in the simulator yet
            out["attention_27b"].append({"shape": {"seq": seq}, "error": f"{type(e).__name__}: {str(e)[:300]}"})
            logger.warning("attention peer seq {}: {}", seq, out["attention_27b"][-1]["error"][:120])
    return out


def matmul_calibration() -> list[dict]:
    from .kernels import bench_matmul

    return [bench_matmul(MatmulBenchArgs(size=4096, format=fmt, fidelity=fid, device=TIMING_ONLY))
            for fmt, fid in (("bf16", "HiFi2"), ("bfp8", "LoFi"))]


def qwen35_9b_n300_ttft(contexts, parallel: str = "tensor") -> list[dict]:
    """Modeled TTFT of Qwen3.5-9B on an n300 from `bench ttft --mesh 1x2 [--parallel pipeline]`: the tensor-parallel
    split (every program of one chip's share simulated, timing only, plus the split's collectives by the Ethernet
    model) or the pipeline split (each stage's programs, scheduled with the engine's look-ahead), at the engine's
    chunk; beside tt-metal's demo as measured."""
    from .ttft_mesh import mesh_ttft_bench
    from .ttft_pipeline import pipeline_ttft_bench

    out = []
    for seq in contexts:
        t0 = time.perf_counter()
        if parallel == "pipeline":
            r = pipeline_ttft_bench("qwen3.5-9b", seq, (1, 2))
        else:
            r = mesh_ttft_bench("qwen3.5-9b", seq, (1, 2))
        logger.info("ttft qwen3.5-9b n300 ({}) seq {}: {:.2f} s modeled, {:.0f} s wall", parallel, seq, r["ttft_s"],
                    time.perf_counter() - t0)
        out.append({"seq": seq, "modeled_ttft_s": r["ttft_s"], "by_op": r["by_op"],
                    "chunk_tokens": r["chunk_tokens"], "weight_format": r["weight_format"], "parallel": parallel,
                    "collective_share": r.get("collective_share", 0.0),
                    "published_ttft_s": PUBLISHED_QWEN35_9B_N300_TTFT_S.get(seq)})
    return out


def plot_all(results: dict, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []

    # 1. FPU utilisation vs context per kernel.
    fig, ax = plt.subplots(figsize=(7, 4.5))
    by_shape: dict[str, list] = {}
    for r in results["attention"]:
        s = r["shape"]
        by_shape.setdefault(f"attention {s['q_heads']}/{s['kv_heads']} d{s['head_dim']}", []).append(
            (s["seq"], r["fpu_util"]))
    for r in results["gdn_27b"]:
        by_shape.setdefault("GDN layer 16/48 K128 V128 (nominal FLOPs)", []).append((r["shape"]["seq"], r["fpu_util"]))
        if "scan_bound_fraction" in r:
            by_shape.setdefault("GDN scan 16/48: % of its FPU+DRAM bound", []).append(
                (r["shape"]["seq"], r["scan_bound_fraction"]))
    for label, pts in by_shape.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [100 * p[1] for p in pts], marker="o", label=label)
    ax.axhline(70, color="gray", ls="--", lw=0.8, label="attention target 70%")
    ax.axhline(50, color="gray", ls=":", lw=0.8, label="GDN scan target 50% of bound")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("context (tokens)")
    ax.set_ylabel("% (modeled): FPU utilisation, or share of the bound")
    ax.set_title("Modeled FPU utilisation vs context (64 cores, one Wormhole chip)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    paths.append(_save(fig, out_dir / "utilisation_vs_context.png"))

    # 2. Roofline.
    from ttprefill.device.program import MathFidelity
    from ttprefill.hw import CLOCK_HZ, DRAM_PEAK_BYTES_PER_CYCLE, MAX_CORES, fpu_peak_flops_per_cycle
    import numpy as np

    fig, ax = plt.subplots(figsize=(7, 4.5))
    peak = fpu_peak_flops_per_cycle(MAX_CORES, MathFidelity.HiFi2) * CLOCK_HZ / 1e12
    bw = DRAM_PEAK_BYTES_PER_CYCLE * CLOCK_HZ
    ai = np.logspace(0, 4, 100)
    ax.plot(ai, np.minimum(peak, ai * bw / 1e12), color="black", lw=1, label=f"roof: {peak:.0f} TFLOP/s HiFi2, {bw / 1e9:.0f} GB/s")
    for label, rows in (("matmul 4096^3", results["matmul"]), ("attention", results["attention"]),
                        ("GDN layer", results["gdn_27b"])):
        # FLOP per DRAM byte = (TFLOP/s) / (DRAM bytes/s), both modeled.
        pts = [(r["tflops"] * 1e12 / (r["dram_util"] * bw), r["tflops"]) for r in rows if r.get("dram_util")]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], label=label, s=18)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte, modeled)")
    ax.set_ylabel("TFLOP/s (modeled)")
    ax.set_title("Roofline (one Wormhole chip, modeled)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    paths.append(_save(fig, out_dir / "roofline.png"))

    # 3. GDN scan against tt-metal's chunk_gated_delta_rule, both modeled, with the cost-setting band.
    rows = [r for r in results["peers"]["gdn_27b"] if "band" in r]
    if rows:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        x = np.arange(len(rows))
        for offset, key, label in ((-0.2, "peer_modeled_s", "tt-metal chunk_gated_delta_rule"),
                                   (0.2, "modeled_s", "ttprefill GDN scan")):
            band = [r["band"][key] for r in rows]
            central = np.array([b["central"] for b in band]) * 1e3
            err = np.array([[c - b["low"] * 1e3 for c, b in zip(central, band)],
                            [b["high"] * 1e3 - c for c, b in zip(central, band)]])
            ax.bar(x + offset, central, 0.4, yerr=err, capsize=3, label=label)
        ax.set_xticks(x, [f"T={r['shape']['seq']}" for r in rows])
        ax.set_ylabel("ms (modeled; bar: central, whiskers: low/high costs)")
        ax.set_title("GDN scan, Qwen3.5-27B shape (16/48 heads, K=V=128): ours vs tt-metal's, one model")
        ax.legend(fontsize=8)
        paths.append(_save(fig, out_dir / "gdn_vs_peer.png"))

    # 4. TTFT of Qwen3.5-9B on n300.
    fig, ax = plt.subplots(figsize=(7, 4.5))
    rows = results["ttft_qwen35_9b_n300"]
    ax.plot([r["seq"] for r in rows], [r["modeled_ttft_s"] for r in rows], marker="o",
            label="ttprefill, tensor-parallel: whole model, every program simulated (modeled)")
    rows = results.get("ttft_qwen35_9b_n300_pipeline", [])
    if rows:
        ax.plot([r["seq"] for r in rows], [r["modeled_ttft_s"] for r in rows], marker="^",
                label="ttprefill, pipeline stages (--parallel pipeline; modeled)")
    pub = sorted(PUBLISHED_QWEN35_9B_N300_TTFT_S.items())
    ax.plot([p[0] for p in pub], [p[1] for p in pub], marker="s", label="tt-metal demo (measured)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("prompt tokens")
    ax.set_ylabel("time to first token, s")
    ax.set_title("Qwen3.5-9B on n300 (2 chips): TTFT")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    paths.append(_save(fig, out_dir / "ttft_qwen35_9b_n300.png"))
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench-results", help="directory for JSON and PNG files")
    parser.add_argument("--quick", action="store_true", help="shorter contexts (a smoke run of the whole set)")
    args = parser.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    logger.remove()
    logger.add(sys.stderr, level="INFO", format="{time:HH:mm:ss} {message}")
    contexts = [1024, 2048] if args.quick else [2048, 4096, 8192, 16384, 32768]
    from ttprefill.device.sim_device import DEFAULT_COST_SETTING, model_version

    results: dict = {"model_version": model_version(), "cost_setting": DEFAULT_COST_SETTING}
    results["matmul"] = matmul_calibration()
    results["attention"] = attention_sweep(contexts, [(24, 4, 256), (16, 4, 128)])
    results["gdn_27b"] = gdn_sweep(contexts, 16, 48, 128, 128)
    results["peers"] = peer_sweep([1024] if args.quick else [2048, 8192])
    # Qwen3.5-9B on an n300: the whole model split over its two chips (bench ttft --mesh 1x2).
    n300_contexts = [1024] if args.quick else [4096, 8192, 16384, 32768]
    results["ttft_qwen35_9b_n300"] = qwen35_9b_n300_ttft(n300_contexts)
    # ... and as two pipeline stages (bench ttft --mesh 1x2 --parallel pipeline)
    results["ttft_qwen35_9b_n300_pipeline"] = qwen35_9b_n300_ttft(n300_contexts, "pipeline")
    (out_dir / "results.json").write_text(json.dumps(results, indent=1))
    paths = plot_all(results, out_dir)
    print(json.dumps({"results": str(out_dir / "results.json"), "plots": [str(p) for p in paths]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
