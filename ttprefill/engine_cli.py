"""`ttprefill prefill`: one prompt through the engine; prints the last token's logits."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from ttprefill.device.backends import close_device, open_device
from ttprefill.device.mesh_timing import LINE, NO_FABRIC
from ttprefill.engine import Engine, EngineError, EngineOptions


def read_tokens(args) -> list[int]:
    if args.tokens and args.text is not None:
        raise EngineError("give either --tokens or --text, not both")
    if args.tokens:
        return _read_token_file(args.tokens)
    if args.text is not None:
        return encode_text(args.text, _tokenizer_path(args))
    raise EngineError("give the prompt with --tokens FILE (or - for stdin) or --text")


def _tokenizer_path(args) -> Path:
    """--tokenizer when given; otherwise the model folder's own tokenizer.json."""
    if args.tokenizer:
        path = Path(args.tokenizer)
        path = path / "tokenizer.json" if path.is_dir() else path
        if not path.is_file():
            raise EngineError(f"--tokenizer {args.tokenizer}: no tokenizer.json there")
        return path
    model = Path(args.model)
    if not model.is_dir():
        raise EngineError(f"--text needs a tokenizer: --model {args.model} is a preset with random weights and no "
                          "tokenizer; give --tokenizer DIR (a folder with tokenizer.json) or --tokens FILE")
    path = model / "tokenizer.json"
    if not path.is_file():
        raise EngineError(f"--text: the model folder {model} has no tokenizer.json; copy the checkpoint's "
                          "tokenizer.json there, give --tokenizer DIR, or give --tokens FILE")
    return path


def encode_text(text: str, tokenizer_json: Path) -> list[int]:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise EngineError("--text needs the `tokenizers` package (scripts/setup-env installs it)") from None
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_json))
    except Exception as e:  # the library raises a bare Exception for a malformed file
        raise EngineError(f"{tokenizer_json} is not a Hugging Face tokenizer.json: {e}") from None
    ids = tokenizer.encode(text).ids
    if not ids:
        raise EngineError("--text gave no tokens; give a non-empty prompt")
    return ids


def _read_token_file(name: str) -> list[int]:
    """Token ids from a file of whitespace-separated integers ('-': standard input)."""
    if name == "-":
        text, where = sys.stdin.read(), "standard input"
    else:
        path = Path(name)
        if path.is_dir():
            raise EngineError(f"--tokens {name} is a folder; give a file of whitespace-separated token ids")
        if not path.exists():
            raise EngineError(f"--tokens {name}: no such file")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise EngineError(f"--tokens {name} is not a text file; give whitespace-separated integer token ids "
                              "(or --text with --tokenizer)") from None
        where = name
    ids = []
    for word in text.split():
        try:
            ids.append(int(word))
        except ValueError:
            raise EngineError(f"--tokens {where}: {word[:40]!r} is not an integer token id") from None
    return ids


def load_model(name_or_dir: str, before_weights=None):
    """A preset with seeded random weights, or a directory holding config.json and safetensors.
    before_weights(config), when given, runs before any weight is read (the memory plan)."""
    from ttprefill.model.config import from_hf_config, get_preset
    from ttprefill.model.weights import load_weights, random_weights

    path = Path(name_or_dir)
    config = from_hf_config(path / "config.json") if path.is_dir() else get_preset(name_or_dir)
    if before_weights is not None:
        before_weights(config)
    if path.is_dir():
        return config, load_weights(path, config), f"{path.resolve()}"
    return config, random_weights(config, seed=0), f"{name_or_dir}:random:0"


def engine_options(args) -> EngineOptions:
    """EngineOptions from the command line; a flag left out keeps EngineOptions' default."""
    megabytes = getattr(args, "cache_budget_mb", None)
    given = {
        "chunk_tokens": getattr(args, "chunk", None),
        "checkpoint_every_blocks": getattr(args, "checkpoint_every", None),
        "cache_budget_bytes": None if megabytes is None else int(megabytes * 2**20),
        "weight_format": getattr(args, "weights", None),
        "matmul_fidelity": getattr(args, "matmul_fidelity", None),
        "tp_scheme": getattr(args, "scheme", None),
        "collective_dtype": getattr(args, "collective_dtype", None),
        "micro_batches": getattr(args, "micro_batches", None),
        "parallel": getattr(args, "parallel", None),
        "kv_page_format": _kv_page_format(getattr(args, "kv_format", None)),
    }
    return EngineOptions(**{name: value for name, value in given.items() if value is not None})


def _kv_page_format(name: str | None):
    """--kv-format's name as the page format (None: left out, EngineOptions' default)."""
    from ttprefill.options import KV_PAGE_FORMAT_NAMES

    return None if name is None else KV_PAGE_FORMAT_NAMES[name]


def check_topology(mesh: tuple[int, int], topology: str) -> None:
    """--topology ring needs a mesh whose wiring closes a ring over every axis its collectives run on (more than
    two chips each: a ring of two is the line between them); refuses any other with the meshes that have one."""
    from ttprefill.device.mesh import RING, WIRED_RINGS

    if topology != RING:
        return
    rows, cols = mesh
    wired = WIRED_RINGS.get(tuple(mesh), frozenset())
    open_axes = [axis for axis, size in enumerate(mesh) if size > 1 and (size == 2 or axis not in wired)]
    rings = ", ".join(f"{r}x{c}" for r, c in WIRED_RINGS)
    if rows * cols == 1:
        raise EngineError(f"--topology ring is how a mesh's collectives run; one chip has none: give --mesh "
                          f"{rings} (a ring) or drop --topology")
    if open_axes:
        raise EngineError(f"--topology ring: the {rows}x{cols} mesh's wiring closes no ring over axis {open_axes[0]} "
                          f"(an n300's two chips are a line; a T3000 closes its ring only as 1x8); use --topology "
                          f"line, or --mesh {rings}")


def prefill_main(args) -> int:
    # Errors propagate to the CLI's one error path (cli.main): a message, exit status 2.
    from ttprefill.engine import DEVICE_BACKENDS, check_memory_plan
    from ttprefill.model.pipeline_split import PIPELINE, check_pipeline_settings, stage_layers

    tokens = read_tokens(args)
    options = engine_options(args)
    mesh = tuple(getattr(args, "mesh", None) or (1, 1))
    chips = mesh[0] * mesh[1]
    if chips > 1 and args.backend not in DEVICE_BACKENDS:
        raise EngineError(f"--mesh {mesh[0]}x{mesh[1]} splits the model over the chips of a device: use --backend sim "
                          "(simulated chips) or --backend tt (a card's mesh through ttnn), or leave --mesh out")
    pipeline = options.parallel == PIPELINE
    if pipeline:  # its stages run no collective: the mesh opens without a fabric
        check_pipeline_settings(getattr(args, "micro_batches", None), "none", getattr(args, "scheme", None),
                                getattr(args, "collective_dtype", None), getattr(args, "topology", None))
        topology = NO_FABRIC
    else:
        topology = getattr(args, "topology", None) or LINE
        check_topology(mesh, topology)

    def before_weights(config):
        if chips > 1 and pipeline:
            stage_layers(config.num_layers, chips)  # more chips than layers is refused with the sizes that work
        elif chips > 1:
            from ttprefill.model.tensor_parallel import TensorParallelPlan

            TensorParallelPlan(config, chips)  # a model the mesh cannot split is refused with the sizes that work
        check_memory_plan(config, options, chips=chips, mesh_shape=mesh)

    config, weights, key = load_model(args.model,
                                      before_weights=before_weights if args.backend in DEVICE_BACKENDS else None)
    device = open_device(args.backend, mesh_shape=mesh, topology=topology) if chips > 1 else None
    try:  # the mesh this opened, and a chip the engine opened itself, are closed on every way out
        with Engine(config, weights, backend=args.backend, options=options, model_key=key, device=device) as engine:
            return _prefill_report(args, engine, tokens, mesh)
    finally:
        close_device(device)


def _prefill_report(args, engine: Engine, tokens: list[int], mesh: tuple[int, int]) -> int:
    """Prefills the prompt and prints what the CLI reports (the engine's device still open)."""
    config = engine.config
    result = engine.prefill(tokens)
    if not np.all(np.isfinite(result.last_logits)):
        raise EngineError(f"the prefill gave non-finite logits (NaN/Inf) on backend {args.backend}: the weights or "
                          "the prompt drive the model out of range; check the checkpoint with --backend torch")
    out = {
        "tokens": result.tokens,
        "cached_tokens": result.cached_tokens,
        "chunks": result.chunks,
        "wall_s": result.wall_s,
        "host_s": result.host_s,
        "backend": args.backend,
        "model": config.name,
        "last_logits": [float(x) for x in result.last_logits],
        "top_token": int(np.argmax(result.last_logits)),
        # host <-> device bytes (0 on --backend torch): per chunk the embeddings down (page table and RoPE
        # tables are resident) and, on the last chunk, the last token's logits row up; GDN states apart
        "host_bytes_down": result.host_bytes_down,
        "host_bytes_up": result.host_bytes_up,
        "checkpoint_bytes_up": result.checkpoint_bytes_up,
        "checkpoint_bytes_down": result.checkpoint_bytes_down,
        "mesh": list(mesh),
        "parallel": engine.options.parallel,
    }
    stages = getattr(engine.model, "stage_ranges", None)
    if stages is not None:  # the pipeline split: each stage's layers [first, last + 1)
        out["stages"] = [[r.start, r.stop] for r in stages]
    if engine.on_device:  # the tensor-parallel split's all-reduces and logits gather (none on one chip)
        collectives = engine.model.collectives.as_dict()
        if not engine.model.models_time:  # a card: what ran and what it moved, no modeled time or link bytes
            collectives = {"modeled": False, "count": collectives["count"],
                           "bytes_per_chip": collectives["bytes_per_chip"]}
        out["collectives"] = collectives
    if result.modeled_device_s is not None:
        out["modeled_s"] = result.modeled_device_s
    if args.json:
        print(json.dumps(out))
    else:
        for k in ("tokens", "cached_tokens", "chunks", "wall_s", "modeled_s", "top_token", "host_bytes_down",
                  "host_bytes_up", "checkpoint_bytes_up"):
            if k in out:
                print(f"{k:>14}: {out[k]}")
    return 0
