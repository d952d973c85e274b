"""The `ttprefill` command. Subcommands import what they need lazily, so `ttprefill drift` runs in
the torch-free ttnn environment."""

from __future__ import annotations

import argparse
import json
import math
import sys
import traceback
from pathlib import Path

EXIT_USAGE = 2  # bad input: the message says what and how to fix it
EXIT_INTERNAL = 1  # a defect of ttprefill itself


def _json_safe(value):
    """JSON has no NaN or Infinity: a non-finite figure is reported as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def _emit(result: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(_json_safe(result), allow_nan=False))
        return
    for key, value in result.items():
        if isinstance(value, float):
            value = f"{value:.6g}"
        print(f"{key:>22}: {value}")


def _add_backend(p: argparse.ArgumentParser, with_torch: bool = False) -> None:
    from ttprefill.device.backends import BACKENDS

    executors = "; ".join(f"{name}: {b.description}" for name, b in BACKENDS.items())
    choices = [*BACKENDS, "torch"] if with_torch else list(BACKENDS)
    p.add_argument("--backend", choices=choices, default="sim",
                   help=executors + ("; torch: the host reference layers, no device programs" if with_torch else ""))
    p.add_argument("--timing-only", action="store_true",
                   help="simulator only: run control flow, CB traffic and the timing model, skip tile arithmetic")


def _int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} must be at least {low}")
        return value

    return parse


_positive_int = _int_at_least(1)
_non_negative_int = _int_at_least(0)


def _add_scheme(parser) -> None:
    from ttprefill.model.tensor_parallel import SCHEMES
    from ttprefill.options import EngineOptions

    parser.add_argument("--scheme", default=None, choices=SCHEMES,
                        help="--mesh: how the chips sum the row-parallel projections: all_reduce (the residual "
                             "stream replicated) or reduce_scatter (split by tokens, an all_gather before each "
                             f"block); default {EngineOptions.tp_scheme}")
    parser.add_argument("--collective-dtype", type=_collective_dtype, default=None,
                        help="--mesh: the format the collectives carry, bf16 or bfp8 for both, or per kind "
                             "'gather=bfp8,reduce=bf16' (gather: the normed rows before a block; reduce: the partial "
                             f"sums after it); default {EngineOptions.collective_dtype}")


def _add_parallel(parser) -> None:
    from ttprefill.model.pipeline_split import PARALLEL_MODES
    from ttprefill.options import EngineOptions

    parser.add_argument("--parallel", default=None, choices=PARALLEL_MODES,
                        help="--mesh: how the chips share the model: tensor (every chip a share of every layer, "
                             "collectives between) or pipeline (every chip a stage of whole layers, a RxC mesh "
                             "R*C stages, the stages on different chunks of a prompt at once, rows handed on through "
                             f"the host); default {EngineOptions.parallel}")


def _add_kv_format(parser, which: str = "") -> None:
    from ttprefill.options import KV_PAGE_FORMAT_NAMES, EngineOptions, kv_page_format_name

    parser.add_argument("--kv-format", default=None, choices=list(KV_PAGE_FORMAT_NAMES),
                        help=f"{which}the format of the attention layers' K/V cache pages: bf16 (2,048 bytes a tile) "
                             "or bfp8 (bfp8_b, 1,088 bytes a tile: about half the DRAM reads of a long prefix and "
                             "nearly twice the pages in the prefix cache's budget); default "
                             f"{kv_page_format_name(EngineOptions.kv_page_format)}")


def _collective_dtype(text: str):
    from ttprefill.model.collective_dtype import CollectiveDtype, CollectiveDtypeError

    try:
        return CollectiveDtype.parse(text)
    except CollectiveDtypeError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _weight_format(text: str) -> str:
    """A weight-format setting (ops/linear/weight_formats.py): 'bfp8', or 'bfp8,mlp_gate_up=bfp4'."""
    from ttprefill.ops.linear.weight_formats import WeightFormatError, WeightFormats

    try:
        WeightFormats.parse(text)
    except WeightFormatError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _matmul_fidelity(text: str):
    """A projection-fidelity setting (ops/linear/fidelity.py): 'LoFi', or 'mlp_gate_up=LoFi,mlp_down=LoFi'."""
    from ttprefill.ops.linear.fidelity import FidelitySpecError, ProjectionFidelity

    try:
        return ProjectionFidelity.parse(text)
    except FidelitySpecError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


# What bench matmul, attention and gdn take as --format (their operands or pages: one format, no roles).
_OPERAND_FORMATS = ("bf16", "bfp8")


def _mesh_shape(text: str) -> tuple[int, int]:
    """'RxC' (e.g. 1x2 for an n300, 2x4 or 1x8 for a T3000) -> (R, C)."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a mesh shape; give ROWSxCOLS, e.g. 1x2 or 2x4")
    return int(parts[0]), int(parts[1])


def _positive_megabytes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be a positive, finite number of MB")
    return value


def _check_bench_args(args) -> None:
    """What argparse cannot check alone, before any work starts (a bad --trace must not fail after the run)."""
    if args.trace is not None and not Path(args.trace).resolve().parent.is_dir():
        raise ValueError(f"--trace {args.trace}: folder {Path(args.trace).resolve().parent} does not exist; "
                         "create it or write the trace elsewhere")
    if args.format is not None and args.what != "ttft" and args.format not in _OPERAND_FORMATS:
        raise ValueError(f"--format {args.format}: bench {args.what} takes one of {', '.join(_OPERAND_FORMATS)}; "
                         "per-role weight formats and bfp4 are for bench ttft's weights")
    if args.kv_format is not None and args.what not in ("ttft", "engine"):
        raise ValueError(f"--kv-format sets the engine's K/V pages, for bench ttft and bench engine; bench "
                         f"{args.what} does not run the engine (bench attention takes its pages' format as --format)")
    if args.what == "attention":
        from ttprefill.model.config import get_preset

        # Without shape flags, the attention layer of the model the project targets.
        target = get_preset("qwen3.5-27b")
        args.q_heads = args.q_heads or target.attn_num_heads
        args.kv_heads = args.kv_heads or target.attn_num_kv_heads
        args.head_dim = args.head_dim or target.attn_head_dim
        args.seq = args.seq or 2048
        if args.prefix >= args.seq:
            raise ValueError(f"--prefix {args.prefix} must be below --seq {args.seq}")


def bench_arguments(args):
    """The typed arguments (ttprefill.bench.options) of the benchmark the parsed flags ask for."""
    from ttprefill import bench

    device = bench.DeviceChoice(backend=args.backend, timing_only=bool(args.timing_only), trace=args.trace,
                                costs=args.costs)
    if args.what == "sim":
        return bench.SimBenchArgs(fidelity=args.fidelity)
    if args.what == "matmul":
        return bench.MatmulBenchArgs(size=args.size, format=args.format, fidelity=args.fidelity, device=device)
    if args.what == "attention":
        return bench.AttentionBenchArgs(seq=args.seq, q_heads=args.q_heads, kv_heads=args.kv_heads,
                                        head_dim=args.head_dim, chunk=args.chunk, prefix=args.prefix,
                                        format=args.format, fidelity=args.fidelity, device=device)
    if args.what == "gdn":
        return bench.GdnBenchArgs(seq=args.seq, qk_heads=args.qk_heads, v_heads=args.v_heads, key_dim=args.key_dim,
                                  value_dim=args.value_dim, chunk=args.chunk, batch=args.batch,
                                  fidelity=args.fidelity, format=args.format, device=device)
    if args.what == "ttft":
        return bench.TtftBenchArgs(model=args.model or "qwen3.5-9b", seq=args.seq or 8192,
                                   weight_format=args.format, chunk=args.chunk, device=device, mesh=args.mesh,
                                   topology=args.topology, matmul_fidelity=args.matmul_fidelity,
                                   scheme=args.scheme, collective_dtype=args.collective_dtype,
                                   fused_collectives=args.fused_collectives,
                                   micro_batches=args.micro_batches, kv_format=args.kv_format,
                                   parallel=args.parallel)
    if args.what == "engine":
        return bench.EngineBenchArgs(seq=args.seq, chunk=args.chunk, kv_format=args.kv_format, device=device)
    if args.what == "checkpoints":
        return bench.EngineBenchArgs(seq=args.seq, chunk=args.chunk, device=device)
    return bench.CalibrationBenchArgs(device=device)


def cmd_bench(args) -> int:
    from ttprefill import bench

    # `bench attention --peer` without shape or length flags sweeps Qwen3.5's attention shapes (peers.py).
    sweep = args.peer and args.what == "attention" and all(
        getattr(args, flag) is None for flag in ("seq", "q_heads", "kv_heads", "head_dim"))
    _check_bench_args(args)
    typed = bench_arguments(args)
    if args.peer:
        from ttprefill import peers

        result = peers.run(args.what, typed, sweep=sweep)
    else:
        result = bench.run(args.what, typed)
    _emit(result, args.json)
    return 0


def cmd_drift(args) -> int:
    from ttprefill import drift

    return drift.main(args.rest)


def cmd_demo(args) -> int:
    from ttprefill import demo

    return demo.main(args)


def cmd_prefill(args) -> int:
    from ttprefill import engine_cli

    return engine_cli.prefill_main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ttprefill", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="the main job: a multi-turn shared-prompt workload on the tiny model")
    _add_backend(demo, with_torch=True)
    demo.add_argument("--requests", type=_positive_int, default=6, help="number of requests in the workload")
    demo.add_argument("--json", action="store_true")
    demo.set_defaults(func=cmd_demo)

    prefill = sub.add_parser("prefill", help="prefill one prompt and print the last token's logits")
    _add_backend(prefill, with_torch=True)
    prefill.add_argument("--tokens", help="file of whitespace-separated token ids ('-' for stdin)")
    prefill.add_argument("--text", help="the prompt as text, tokenized with the model folder's tokenizer.json "
                         "(or --tokenizer)")
    prefill.add_argument("--tokenizer", help="a folder with a Hugging Face tokenizer.json (default: the --model folder)")
    prefill.add_argument("--model", default="tiny", help="preset name or a directory with config.json + safetensors")
    # Left out, these keep EngineOptions' defaults (engine_cli.engine_options); the help shows them.
    from ttprefill.ops.linear.fidelity import ROLES
    from ttprefill.ops.linear.weight_formats import FORMATS as WEIGHT_FORMAT_NAMES
    from ttprefill.options import EngineOptions

    defaults = EngineOptions()
    prefill.add_argument("--chunk", type=_positive_int, default=None,
                         help=f"tokens per device chunk (default {defaults.tokens_per_chunk}; with --parallel pipeline "
                              f"{EngineOptions(parallel='pipeline').tokens_per_chunk})")
    prefill.add_argument("--checkpoint-every", type=_positive_int, default=None,
                         help=f"GDN checkpoint every N cache blocks (default {defaults.checkpoint_every_blocks})")
    prefill.add_argument("--cache-budget-mb", type=_positive_megabytes, default=None,
                         help=f"prefix cache byte budget (default {defaults.cache_budget_bytes / 2**20:g})")
    prefill.add_argument("--weights", type=_weight_format, default=None, metavar="SPEC",
                         help=f"device weight matrices: {', '.join(WEIGHT_FORMAT_NAMES)} for all, optionally then "
                              f"role=format pairs (roles {', '.join(ROLES)}), "
                              "e.g. bfp8,mlp_gate_up=bfp4 (tt-metal's Qwen3.5 demo MLP, with --matmul-fidelity "
                              f"mlp_gate_up=LoFi,mlp_down=LoFi); default {EngineOptions.weight_format}")
    prefill.add_argument("--matmul-fidelity", type=_matmul_fidelity, default=None, metavar="SPEC",
                         help="the projections' math fidelity, one for all (e.g. LoFi) or role=fidelity pairs over the "
                              f"defaults ({EngineOptions.matmul_fidelity.describe()})")
    _add_kv_format(prefill)
    prefill.add_argument("--mesh", type=_mesh_shape, default=(1, 1),
                         help="split the model over ROWSxCOLS simulated chips (1x2 n300; 2x4 or 1x8 T3000; "
                              "--parallel says how); default 1x1, one chip")
    _add_scheme(prefill)
    _add_parallel(prefill)
    prefill.add_argument("--topology", default=None, choices=["line", "ring"],
                         help="--mesh: the fabric the collectives run on (ttnn FABRIC_1D or FABRIC_1D_RING); ring only "
                              "where the wiring closes one over more than two chips (a T3000 as 1x8); default line "
                              "(--parallel pipeline runs no collective and opens the mesh without a fabric)")
    prefill.add_argument("--micro-batches", type=int, default=None, choices=(1, 2),
                         help="run each chunk as this many micro-batches, interleaved block by block (2: halves whose "
                              "collectives a mesh can overlap with the other half's programs; a chunk shorter than "
                              f"two GDN chunks runs whole); default {defaults.micro_batches}")
    prefill.add_argument("--json", action="store_true")
    prefill.set_defaults(func=cmd_prefill)

    bench = sub.add_parser("bench", help="benchmarks; --json prints one JSON object on stdout")
    bench.add_argument("what", choices=["sim", "matmul", "attention", "gdn", "engine", "checkpoints", "calibration",
                                        "ttft"])
    bench.add_argument("--model", default=None, help="ttft: the preset (default qwen3.5-9b)")
    bench.add_argument("--mesh", type=_mesh_shape, default=(1, 1),
                       help="ttft: the model split over ROWSxCOLS chips (1x2 n300; 2x4 or 1x8 T3000), as --parallel "
                            "says")
    _add_parallel(bench)
    bench.add_argument("--topology", default=None, choices=["line", "ring"],
                       help="ttft --mesh: how the collectives run (ring where the wiring closes one, e.g. 1x8); default "
                            "line; refused with --parallel pipeline, which runs none")
    _add_scheme(bench)
    bench.add_argument("--fused-collectives", default="none", choices=["none", "fused", "faster"],
                       help="ttft --mesh --scheme reduce_scatter: time each matmul + collective pair as ttnn's fused "
                            "ops (all_gather_matmul_async, matmul_reduce_scatter_async; a 1-D mesh, the residual split "
                            "by features as they require): 'fused' wherever ttnn runs them on the mesh, 'faster' each "
                            "pair the faster way; default none, what the card path runs")
    bench.add_argument("--micro-batches", type=int, default=None, choices=(1, 2),
                       help="ttft --mesh: run each chunk as this many micro-batches (2: each block's collectives on a "
                            "sub-device of their own beside the other half's programs, which keep the grid the "
                            "collectives' cores leave; modeled by mesh timing 4); default 1")
    _add_backend(bench, with_torch=True)
    bench.add_argument("--json", action="store_true")
    bench.add_argument("--seq", type=_positive_int, default=None)
    bench.add_argument("--q-heads", type=_positive_int, default=None)
    bench.add_argument("--kv-heads", type=_positive_int, default=None)
    bench.add_argument("--head-dim", type=_positive_int, default=None)
    bench.add_argument("--prefix", type=_non_negative_int, default=0)
    bench.add_argument("--chunk", type=_positive_int, default=None,
                       help="attention/gdn: tokens per call; ttft: tokens per device chunk (default: the engine's)")
    bench.add_argument("--qk-heads", type=_positive_int, default=None)
    bench.add_argument("--v-heads", type=_positive_int, default=None)
    bench.add_argument("--key-dim", type=_positive_int, default=None)
    bench.add_argument("--value-dim", type=_positive_int, default=None)
    bench.add_argument("--batch", type=_positive_int, default=1)
    bench.add_argument("--size", type=_positive_int, default=None, help="matmul: M = K = N (a multiple of 32)")
    bench.add_argument("--format", default=None, type=_weight_format, metavar="FORMAT",
                       help="matmul: operands, attention: K/V pages, gdn: its tensors (bf16 or bfp8); ttft: the weight "
                            "matrices, as prefill --weights takes them (e.g. bfp8 or bfp8,mlp_gate_up=bfp4)")
    _add_kv_format(bench, "ttft, engine: ")
    bench.add_argument("--fidelity", default=None, choices=["LoFi", "HiFi2", "HiFi3", "HiFi4"])
    bench.add_argument("--matmul-fidelity", default=None, metavar="SPEC",
                       help="ttft: the projections' math fidelity, one for all (e.g. LoFi) or role=fidelity pairs "
                            "over the engine's defaults (roles mlp_gate_up, mlp_down, gdn_in, gdn_out, attention_in, "
                            "attention_out, lm_head)")
    bench.add_argument("--trace", default=None, help="write a Chrome/Perfetto trace of the run to this file")
    bench.add_argument("--peer", action="store_true",
                       help="attention, gdn: also run tt-metal's own kernel for the same shape (sdpa, "
                            "chunk_gated_delta_rule) at every cost setting; report both and the speedup as bands")
    bench.add_argument("--costs", default=None, choices=["low", "central", "high"],
                       help="simulator: the timing model's uncertain costs at the low end, central value or high end "
                            "of their ranges (docs/TIMING.md)")
    bench.set_defaults(func=cmd_bench)

    drift = sub.add_parser("drift", help="check the simulator's kernel API against the pinned ttnn headers")
    drift.add_argument("rest", nargs=argparse.REMAINDER)
    drift.set_defaults(func=cmd_drift)
    return parser


def _is_input_error(error: BaseException) -> bool:
    """Errors that describe bad input or an unusable environment (the message names it and the fix):
    ValueError (every input error type here derives from it), OSError (files), and the package's own
    runtime errors (a full cache, no card, a kernel the simulator stopped)."""
    own = type(error).__module__.startswith("ttprefill")
    return isinstance(error, (ValueError, OSError)) or (own and isinstance(error, RuntimeError))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # --debug anywhere on the line: show tracebacks instead of the one-line message.
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    command = argv[0] if argv else ""
    try:
        if command == "drift":
            # The drift report has its own argument parser; hand it everything after the subcommand.
            from ttprefill import drift

            return drift.main(argv[1:])
        args = build_parser().parse_args(argv)
        if getattr(args, "json", False):
            # Logs go to stderr; stdout carries exactly one JSON object.
            from loguru import logger

            logger.remove()
            logger.add(sys.stderr, level="WARNING")
        return args.func(args)
    except SystemExit as e:  # argparse's own refusals (already printed with the usage line) and --help
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        print(f"ttprefill {command}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # the one error path of every command
        if debug:
            traceback.print_exc()
        if _is_input_error(e):
            print(f"ttprefill {command}: {e}", file=sys.stderr)
            return EXIT_USAGE
        print(f"ttprefill {command}: internal error ({type(e).__name__}: {e}); this is a defect of ttprefill"
              + ("" if debug else ", run again with --debug for the traceback"), file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
