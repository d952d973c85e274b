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
        from dataclasses import replace

        from ttprefill.ops.linear.fidelity import ProjectionFidelity
        from ttprefill.options import KV_PAGE_FORMAT_NAMES, EngineOptions

        from ttprefill.model.pipeline_split import PIPELINE

        if args.parallel == PIPELINE:  # before the options, which refuse micro-batches with their own words
            from .ttft_pipeline import check_pipeline_bench

            check_pipeline_bench(args.mesh, args.micro_batches, args.fused_collectives, args.scheme,
                                 args.collective_dtype, args.topology)
        options = EngineOptions() if args.chunk is None else EngineOptions(chunk_tokens=args.chunk)
        # the flags given, over EngineOptions' defaults (a fidelity setting's roles over the default fidelities)
        given = {"matmul_fidelity": None if args.matmul_fidelity is None else
                 ProjectionFidelity.parse(args.matmul_fidelity, options.matmul_fidelity),
                 "tp_scheme": args.scheme, "collective_dtype": args.collective_dtype,
                 "micro_batches": args.micro_batches,
                 "kv_page_format": None if args.kv_format is None else KV_PAGE_FORMAT_NAMES[args.kv_format]}
        options = replace(options, **{name: value for name, value in given.items() if value is not None})
        if args.parallel == PIPELINE:
            from .ttft_pipeline import pipeline_ttft_bench

            return pipeline_ttft_bench(args.model, args.seq, args.mesh, args.weight_format, args.device.costs,
                                       options)
        if args.mesh != (1, 1):
            from ttprefill.device.mesh_timing import LINE

            from .ttft_mesh import mesh_ttft_bench

            return mesh_ttft_bench(args.model, args.seq, args.mesh, args.topology or LINE, args.weight_format,
                                   args.device.costs, options, fused_collectives=args.fused_collectives)
        return ttft_bench(args.model, args.seq, args.weight_format, args.device.costs, options)
    if what == "calibration":
        from ttprefill.calibration import bench_calibration

        return bench_calibration(args)
    raise ValueError(f"unknown benchmark {what!r}; choose one of {', '.join(BENCHMARKS)}")


__all__ = ["BENCHMARKS", "AttentionBenchArgs", "CalibrationBenchArgs", "DeviceChoice", "EngineBenchArgs",
           "GdnBenchArgs", "MatmulBenchArgs", "SimBenchArgs", "TtftBenchArgs", "run"]
