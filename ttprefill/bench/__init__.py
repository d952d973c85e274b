"""Benchmarks behind `ttprefill bench ...` and scripts/bench. Each takes typed arguments
(ttprefill.bench.options) and returns one JSON-ready dict; figures from the timing model are labelled
modeled, wall-clock figures are the host's.

Modules: options (the argument types), device (which executor, trace files), utilisation (modeled
figures against the chip's peaks), kernels (sim, matmul), attention, gdn, engine (engine, checkpoints),
standard (the standard set with plots, `python -m ttprefill.bench.standard`).
"""

from __future__ import annotations

from .options import (
    AttentionBenchArgs,
    CalibrationBenchArgs,
    DeviceChoice,
    EngineBenchArgs,
    GdnBenchArgs,
    MatmulBenchArgs,
    SimBenchArgs,
    TtftBenchArgs,
)

BENCHMARKS = ("sim", "matmul", "attention", "gdn", "engine", "checkpoints", "calibration", "ttft")


def run(what: str, args) -> dict:
    """Run the benchmark `what` with its typed arguments."""
    if what == "sim":
        from .kernels import bench_sim

        return bench_sim(args)
    if what == "matmul":
        from .kernels import bench_matmul

        return bench_matmul(args)
    if what == "attention":
        from .attention import attention_bench

        return attention_bench(args)
    if what == "gdn":
        from .gdn import gdn_bench

        return gdn_bench(args)
    if what == "engine":
        from .engine import engine_bench

        return engine_bench(args)
    if what == "checkpoints":
        from .engine import checkpoint_sweep

        return checkpoint_sweep(args)
    if what == "ttft":
        from .ttft import ttft_bench

        if args.device.backend != "sim" or not args.device.timing_only:
            raise ValueError("bench ttft runs the simulator in timing-only mode: give --timing-only (and "
                             "--backend sim)")
        from ttprefill.options import EngineOptions

        from ttprefill.ops.linear.fidelity import ProjectionFidelity

        options = EngineOptions() if args.chunk is None else EngineOptions(chunk_tokens=args.chunk)
        if args.matmul_fidelity is not None:
            from dataclasses import replace

            options = replace(options, matmul_fidelity=ProjectionFidelity.parse(args.matmul_fidelity,
                                                                                options.matmul_fidelity))
        if args.scheme is not None:
            from dataclasses import replace

            options = replace(options, tp_scheme=args.scheme)
        if args.collective_dtype is not None:
            from dataclasses import replace

            options = replace(options, collective_dtype=args.collective_dtype)
        if args.micro_batches is not None:
            from dataclasses import replace

            options = replace(options, micro_batches=args.micro_batches)
        if args.kv_format is not None:
            from dataclasses import replace

            from ttprefill.options import KV_PAGE_FORMAT_NAMES

            options = replace(options, kv_page_format=KV_PAGE_FORMAT_NAMES[args.kv_format])
        if args.mesh != (1, 1):
            from .ttft_mesh import mesh_ttft_bench

            return mesh_ttft_bench(args.model, args.seq, args.mesh, args.topology, args.weight_format,
                                   args.device.costs, options, fused_collectives=args.fused_collectives)
        return ttft_bench(args.model, args.seq, args.weight_format, args.device.costs, options)
    if what == "calibration":
        from ttprefill.calibration import bench_calibration

        return bench_calibration(args)
    raise ValueError(f"unknown benchmark {what!r}; choose one of {', '.join(BENCHMARKS)}")


__all__ = ["BENCHMARKS", "AttentionBenchArgs", "CalibrationBenchArgs", "DeviceChoice", "EngineBenchArgs",
           "GdnBenchArgs", "MatmulBenchArgs", "SimBenchArgs", "TtftBenchArgs", "run"]
