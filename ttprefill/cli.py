"""The `ttprefill` command. Subcommands import what they need lazily, so `ttprefill drift` runs in
the torch-free ttnn environment."""

from __future__ import annotations

import argparse
import json
import sys


def _emit(result: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        if isinstance(value, float):
            value = f"{value:.6g}"
        print(f"{key:>22}: {value}")


def _add_backend(p: argparse.ArgumentParser, with_torch: bool = False) -> None:
    choices = ["sim", "tt", "torch"] if with_torch else ["sim", "tt"]
    p.add_argument("--backend", choices=choices, default="sim",
                   help="sim: the simulator built from this repository (default); tt: a Wormhole card through ttnn"
                        + ("; torch: the host reference layers, no device programs" if with_torch else ""))
    p.add_argument("--timing-only", action="store_true",
                   help="simulator only: run control flow, CB traffic and the timing model, skip tile arithmetic")


def cmd_bench(args) -> int:
    from ttprefill import bench

    result = bench.run(args.what, args)
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
    demo.add_argument("--requests", type=int, default=6, help="number of requests in the workload")
    demo.add_argument("--json", action="store_true")
    demo.set_defaults(func=cmd_demo)

    prefill = sub.add_parser("prefill", help="prefill one prompt and print the last token's logits")
    _add_backend(prefill, with_torch=True)
    prefill.add_argument("--tokens", help="file of whitespace-separated token ids ('-' for stdin)")
    prefill.add_argument("--text", help="text to tokenize with --tokenizer")
    prefill.add_argument("--tokenizer", help="a local tokenizer directory (Hugging Face tokenizer.json)")
    prefill.add_argument("--model", default="tiny", help="preset name or a directory with config.json + safetensors")
    prefill.add_argument("--chunk", type=int, default=256, help="tokens per device chunk")
    prefill.add_argument("--checkpoint-every", type=int, default=4, help="GDN checkpoint every N cache blocks")
    prefill.add_argument("--cache-budget-mb", type=float, default=256.0, help="prefix cache byte budget")
    prefill.add_argument("--json", action="store_true")
    prefill.set_defaults(func=cmd_prefill)

    bench = sub.add_parser("bench", help="benchmarks; --json prints one JSON object on stdout")
    bench.add_argument("what", choices=["sim", "matmul", "attention", "gdn", "engine", "checkpoints"])
    _add_backend(bench, with_torch=True)
    bench.add_argument("--json", action="store_true")
    bench.add_argument("--seq", type=int, default=None)
    bench.add_argument("--q-heads", type=int, default=None)
    bench.add_argument("--kv-heads", type=int, default=None)
    bench.add_argument("--head-dim", type=int, default=None)
    bench.add_argument("--prefix", type=int, default=0)
    bench.add_argument("--chunk", type=int, default=None)
    bench.add_argument("--qk-heads", type=int, default=None)
    bench.add_argument("--v-heads", type=int, default=None)
    bench.add_argument("--key-dim", type=int, default=None)
    bench.add_argument("--value-dim", type=int, default=None)
    bench.add_argument("--batch", type=int, default=1)
    bench.add_argument("--size", type=int, default=None, help="matmul: M = K = N")
    bench.add_argument("--format", default=None, help="matmul: bf16 or bfp8")
    bench.add_argument("--fidelity", default=None, help="LoFi, HiFi2, HiFi3 or HiFi4")
    bench.add_argument("--trace", default=None, help="write a Chrome/Perfetto trace of the run to this file")
    bench.set_defaults(func=cmd_bench)

    drift = sub.add_parser("drift", help="check the simulator's kernel API against the pinned ttnn headers")
    drift.add_argument("rest", nargs=argparse.REMAINDER)
    drift.set_defaults(func=cmd_drift)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["drift"]:
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


if __name__ == "__main__":
    raise SystemExit(main())
