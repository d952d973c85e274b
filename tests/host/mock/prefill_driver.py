"""`ttprefill prefill --mesh RxC` on one backend, with what the executor was asked to do recorded:

    python prefill_driver.py sim|tt RxC MODEL TOKENS_FILE CHUNK report.json [SCHEME [TOPOLOGY [FLAG ...]]]

SCHEME: the mesh's collective scheme (prefill --scheme), all_reduce unless given, "none" to give no --scheme (the
pipeline split, which refuses one); TOPOLOGY: prefill --topology,
line unless given, "-" to give no --topology (the pipeline split, which refuses one); FLAGs: more prefill flags, as given. Closing the executor is recorded too (with, from the
card bridge, what ttnn holds once it is closed).

Runs the CLI as a user would (a preset with its seeded weights: "tiny", or "tiny-8way", the tiny preset with
heads enough for eight chips, registered here) and records, in order, every program the
device stack dispatched (a run or run_per_chip call: one dispatch however many chips run it), every collective
(its kind, its input's and output's per-chip shapes), every host read (which call, the tensor's per-chip shape,
the shape or byte count that came back), and the per-chip shapes of each tensor the stack holds after it is
built (weights, K/V pools), as the executor itself reports them: ttnn.get_device_tensors on the card path,
each simulated chip's shard on the simulator.

With --parallel pipeline (a FLAG) the model runs as one one-chip device stack per chip, on the stage devices
model/pipeline_stack.stage_devices gives: a program or read made on a stage device is recorded with the chip that
device drives, as its executor says (the ttnn device id of a card stage's one-chip submesh, the index of a
simulated chip in its SimMesh), as a last entry; a dispatch or read on the device the CLI opened has none. Every
device stack built is recorded in "stacks", with its chip (None for the opened device) and held tensors; "held"
is the last one's.

Both run in the main .venv (the engine needs torch). "sim" runs the simulator's SimMesh; "tt" runs TTDevice in
the ttnn environment behind card_bridge.py (its python named by $TTPREFILL_BRIDGE_PYTHON; on a card, or on
ttnn's mock cluster when test_mock_prefill.py starts this in mock_env's environment). The test compares the
two reports.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
import traceback
from pathlib import Path

RECORD: dict = {"events": [], "held": None, "stacks": []}
_depth = [0]
STAGE_CHIPS: dict[int, int] = {}  # id(stage device) -> the chip it drives (record_stage_chips)


def _on_chip(device) -> list[int]:
    """What an event on `device` ends with: [its chip] for a stage device, nothing for the opened device."""
    chip = STAGE_CHIPS.get(id(device))
    return [] if chip is None else [chip]


def _per_chip_shapes(t) -> list[list[int]]:
    """Each chip's shape of a device tensor, as its executor reports it."""
    if hasattr(t, "shards"):  # SimMesh's MeshTensor: one SimDevice tensor per chip
        return [list(s.shape) for s in t.shards]
    if not hasattr(t.device, "per_chip_shapes"):  # one simulated chip
        return [list(t.shape)]
    return t.device.per_chip_shapes(t)  # the card bridge asks ttnn (get_device_tensors)


def _tensors_of(obj) -> list:
    """The device tensors inside a resident weight (a tensor, a DenseWeight's, a chunked LM head's)."""
    from ttprefill.device.tensor import DeviceTensor

    if isinstance(obj, DeviceTensor):
        return [obj]
    if hasattr(obj, "chunks"):
        return [t for c in obj.chunks for t in _tensors_of(c)]
    for name in ("tensor", "rows"):
        if isinstance(getattr(obj, name, None), DeviceTensor):
            return [getattr(obj, name)]
    raise TypeError(f"no device tensor in a {type(obj).__name__}")


def _wrap_dispatch(cls, name: str):
    original = getattr(cls, name)

    def counted(self, *args, **kwargs):
        _depth[0] += 1
        try:
            report = original(self, *args, **kwargs)
        finally:
            _depth[0] -= 1
        if _depth[0] == 0:  # SimMesh.run calls run_per_chip: one dispatch
            program = args[0]
            label = program.name if hasattr(program, "name") else kwargs.get("name") or (args[1] if len(args) > 1 else "")
            RECORD["events"].append(["program", name, label, *_on_chip(self)])
        return report

    setattr(cls, name, counted)


def _wrap_collective(cls, name: str):
    original = getattr(cls, name)

    def counted(self, tensor, *args, **kwargs):
        _depth[0] += 1  # what a collective does on its chips is part of it
        try:
            out = original(self, tensor, *args, **kwargs)
        finally:
            _depth[0] -= 1
        if _depth[0] == 0:
            RECORD["events"].append(["collective", name, _per_chip_shapes(tensor), _per_chip_shapes(out)])
        return out

    setattr(cls, name, counted)


def _wrap_read(cls, name: str):
    original = getattr(cls, name)

    def counted(self, tensor, *args, **kwargs):
        _depth[0] += 1
        try:
            out = original(self, tensor, *args, **kwargs)
        finally:
            _depth[0] -= 1
        if _depth[0] == 0:  # a read made by another read (read_pages downloads) is the same read
            got = [list(a.shape) for a in out] if isinstance(out, list) else list(out.shape)
            RECORD["events"].append(["read", name, list(tensor.shape), [int(a) for a in args], got,
                                     *_on_chip(self)])
        return out

    setattr(cls, name, counted)


def _wrap_close(cls) -> None:
    original = cls.close

    def counted(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        RECORD["events"].append(["close", getattr(self, "closed_state", None)])  # the card bridge's: what ttnn holds
        return out

    cls.close = counted


def instrument(executor_cls) -> None:
    """Record the calls made of an executor class (those it has; a call made inside another is part of it)."""
    for wrap, names in ((_wrap_dispatch, ("run", "run_per_chip")),
                        (_wrap_collective, ("all_reduce", "all_gather", "reduce_scatter")),
                        (_wrap_read, ("read_pages", "read_shard_pages", "download", "download_shards"))):
        for name in names:
            if hasattr(executor_cls, name):
                wrap(executor_cls, name)
    if hasattr(executor_cls, "close"):
        _wrap_close(executor_cls)


def record_held() -> None:
    """Record each chip's shape of every tensor the device stack holds once it is built."""
    from ttprefill.model import device_stack

    init = device_stack.DeviceStack.__init__

    def built(stack, *args, **kwargs):
        init(stack, *args, **kwargs)
        held = [_per_chip_shapes(t) for w in stack.src.tensors for t in _tensors_of(w)]
        held += [_per_chip_shapes(t) for cache in stack.kv.values() for t in (cache.k_pool, cache.v_pool)]
        RECORD["held"] = held
        RECORD["stacks"].append({"chip": STAGE_CHIPS.get(id(stack.device)), "held": held})

    device_stack.DeviceStack.__init__ = built


def record_stage_chips() -> None:
    """Note the chip each stage device of a pipeline drives, as its executor says: a card stage's one-chip submesh
    its ttnn device id (the card bridge asks the server), a simulated chip its index among its SimMesh's chips."""
    from ttprefill.model import pipeline_stack

    stage_devices = pipeline_stack.stage_devices

    def noted(device):
        stages = stage_devices(device)
        if len(stages) > 1:  # one chip: the opened device itself is its one stage
            for stage in stages:
                chips = stage.chip_ids() if hasattr(stage, "chip_ids") else [device.chips.index(stage)]
                if len(chips) != 1:
                    raise RuntimeError(f"a stage device drives chips {chips}; one was expected")
                STAGE_CHIPS[id(stage)] = chips[0]
        return stages

    pipeline_stack.stage_devices = noted


def register_tiny_8way() -> None:
    """tiny with 8 GDN v heads over 4 q/k heads and 8 attention q heads over 2 kv heads: a chip of eight holds one
    v head, one q head, a q/k head and a kv head shared with its neighbours (tiny itself splits over 1, 2, 4)."""
    from ttprefill.model import config

    config.PRESETS["tiny-8way"] = lambda: config.PRESETS["tiny"]().with_changes(
        name="tiny-8way", gdn_num_qk_heads=4, gdn_num_v_heads=8, attn_num_heads=8, attn_num_kv_heads=2)


def simulate_first_chip_only(cls) -> None:
    """The SimMesh (or SimDevice) the CLI opens runs timing only, a SimMesh simulating its first chip for all
    (spmd_first_chip_only): what is dispatched, the shapes and the reads do not depend on values (nor does the
    mock's run, where nothing executes), and eight simulated chips with data would take minutes."""
    init = cls.__init__
    mesh = "spmd_first_chip_only" in init.__code__.co_varnames

    def timing_only(self, *args, **kwargs):
        kwargs.setdefault("timing_only", True)
        if mesh:
            kwargs.setdefault("spmd_first_chip_only", True)
        init(self, *args, **kwargs)

    cls.__init__ = timing_only


def main(backend: str, mesh: str, model: str, tokens: str, chunk: str, path: str, scheme: str = "all_reduce",
         topology: str = "line", *more: str) -> None:
    from ttprefill import cli

    register_tiny_8way()

    if backend == "sim":  # a mesh opens a SimMesh, one chip a SimDevice
        from ttprefill.device.mesh import SimMesh as executor_cls
        from ttprefill.device.sim_device import SimDevice

        simulate_first_chip_only(executor_cls)
        simulate_first_chip_only(SimDevice)
        instrument(SimDevice)
    else:  # TTDevice itself runs in the ttnn environment, behind the bridge (card_bridge.py)
        from card_bridge import CardBridge as executor_cls

        from ttprefill.device import tt_device

        tt_device.TTDevice = executor_cls
    instrument(executor_cls)
    record_held()
    record_stage_chips()
    report: dict = {"backend": backend, "mesh": mesh}
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            # named, not the default: test_mock_prefill derives the all_reduce scheme's collectives
            scheme_flag = [] if scheme == "none" else ["--scheme", scheme]
            topology_flag = [] if topology == "-" else ["--topology", topology]
            code = cli.main(["prefill", "--json", "--backend", backend, "--mesh", mesh, "--model", model,
                             "--tokens", tokens, "--chunk", chunk, *scheme_flag, *topology_flag, *more])
        report["exit_code"] = code
        report["stderr"] = err.getvalue()[-4000:]
        lines = out.getvalue().strip().splitlines()
        report["result"] = json.loads(lines[-1]) if code == 0 and lines else None
    except Exception as e:
        report["error"] = f"{type(e).__name__}: {e}"[:2000]
        report["traceback"] = traceback.format_exc()[-4000:]
    report["wall_s"] = time.perf_counter() - t0
    report.update(RECORD)
    Path(path).write_text(json.dumps(report))


if __name__ == "__main__":
    main(*sys.argv[1:])
