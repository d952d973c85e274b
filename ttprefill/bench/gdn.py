"""`ttprefill bench gdn`: one GDN layer core on a device, with modeled figures and accuracy."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ttprefill.device.program import MathFidelity
from ttprefill.device.backends import backend_info
from ttprefill.hw import CLOCK_HZ, MAX_CORES
from ttprefill.ops.gdn import (
    BF16,
    DEFAULT_CHUNK,
    CONV_WIDTH,
    FP32,
    SCAN_FIDELITY,
    GdnDims,
    ScanShape,
    bound_fraction,
    gdn_layer,
    min_dram_bytes,
    nominal_flops,
    scan_min_dram_bytes,
)

from .device import device_for, finish_trace
from .options import GdnBenchArgs
from .utilisation import CombinedRuns, utilisation

# Above this many (token x value head) pairs the bench skips the fp64 reference (it would take
# minutes) and runs the simulator in timing-only mode unless told otherwise.
BENCH_REFERENCE_LIMIT = 1 << 16


def _layer_inputs(dims: GdnDims, tokens: int, rng: np.random.Generator, *, values: bool = True):
    """Random layer-core inputs and weights in the ranges a trained layer sees (bf16-exact activations).

    values=False: the activations and states are zeros of the same shapes, for timing-only runs, where
    no arithmetic is done and a 32k-token layer's random inputs would take gigabytes of host memory.
    """
    from ttprefill.device.formats import round_to_bf16
    from ttprefill.reference.gdn import GdnLayerParams

    c, hv = dims.conv_channels, dims.v_heads
    if values:
        bf = lambda x: round_to_bf16(np.asarray(x, np.float32))  # noqa: E731
    else:
        rng = _ZeroGenerator()
        bf = lambda x: x  # noqa: E731
    params = GdnLayerParams(dims.qk_heads, hv, dims.key_dim, dims.value_dim,
                            conv_weight=(0.5 * rng.standard_normal((c, CONV_WIDTH))).astype(np.float32),
                            A_log=np.log(rng.uniform(1.0, 16.0, hv)).astype(np.float32),
                            dt_bias=(0.5 * rng.standard_normal(hv)).astype(np.float32),
                            norm_weight=rng.uniform(0.5, 1.5, dims.value_dim).astype(np.float32))
    inputs = dict(qkv=bf(rng.standard_normal((tokens, c))), z=bf(rng.standard_normal((tokens, hv * dims.value_dim))),
                  a=bf(rng.standard_normal((tokens, hv))), b=bf(rng.standard_normal((tokens, hv))),
                  conv_state=bf(rng.standard_normal((CONV_WIDTH - 1, c))),
                  recurrent_state=(0.5 * rng.standard_normal((hv, dims.key_dim, dims.value_dim))).astype(np.float32))
    return params, inputs


class _ZeroGenerator:
    """Stands in for a numpy Generator where only shapes matter: every draw is zeros (np.zeros maps its
    memory lazily, so the arrays cost nothing until written)."""

    def standard_normal(self, shape):
        return np.zeros(shape, np.float32)

    def uniform(self, low, high, shape):
        return np.full(shape, (low + high) / 2, np.float32)


def gdn_bench(args: GdnBenchArgs) -> dict:
    """One GDN layer core (conv, gates, scan, gated norm) on the device at the requested shape.

    Shape: seq, qk_heads, v_heads, key_dim, value_dim, chunk (defaults: the 27B layer at 4096 tokens),
    batch (independent sequences; they run as extra heads, which is what they are to the kernels);
    fidelity, and format fp32|bf16 for the scan's chunk records. Reports host wall
    time, modeled cycles / seconds / TFLOP/s / FPU and DRAM utilisation (TFLOP/s counts GDN.md's nominal
    chunked-scan FLOPs), a per-program breakdown, and PCC / relative RMS of y and the final state against
    the fp64 reference when the shape is small enough (T * HV * batch <= BENCH_REFERENCE_LIMIT).
    """
    tokens = args.seq or 4096
    batch = args.batch or 1
    h = (args.qk_heads or 16) * batch
    hv = (args.v_heads or 48) * batch
    dims = GdnDims(h, hv, args.key_dim or 128, args.value_dim or 128)
    chunk = args.chunk or DEFAULT_CHUNK
    fidelity = MathFidelity[args.fidelity] if args.fidelity else SCAN_FIDELITY
    record_format = {None: FP32, "fp32": FP32, "bf16": BF16}.get(args.format)
    if record_format is None:
        raise ValueError(f"--format for gdn chooses the scan's chunk-record format: fp32 (default) or bf16; "
                         f"got {args.format!r}")
    shape = ScanShape.of(dims, tokens, chunk)
    check = tokens * hv <= BENCH_REFERENCE_LIMIT
    choice = args.device
    if not check and backend_info(choice.backend).models_time:
        choice = replace(choice, timing_only=True)
    device = device_for(choice)
    timing_only = choice.timing_only and backend_info(choice.backend).models_time
    params, inputs = _layer_inputs(dims, tokens, np.random.default_rng(0), values=not timing_only)
    reports: list = []
    t0 = time.perf_counter()
    y, _, state, _ = gdn_layer(device, inputs["qkv"], inputs["z"], inputs["a"], inputs["b"], params,
                               inputs["conv_state"], inputs["recurrent_state"], chunk, fidelity=fidelity,
                               record_format=record_format, reports=reports)
    wall = time.perf_counter() - t0
    for r in reports:
        finish_trace(choice, r)
    out = {"wall_s": wall,
           "shape": {"seq": tokens, "batch": batch, "qk_heads": h // batch, "v_heads": hv // batch,
                     "key_dim": dims.key_dim, "value_dim": dims.value_dim, "chunk": chunk,
                     "fidelity": fidelity.name, "records": record_format.name, "timing_only": timing_only}}
    if reports and device.capabilities.models_time:
        total = CombinedRuns(reports)
        out.update(utilisation(total, flops=nominal_flops(shape), cores=MAX_CORES, fidelity=fidelity))
        out["fpu_flops_executed"] = total.counters.get("fpu_flops", 0)
        out["programs"] = {r.program.split("_T")[0]: r.cycles for r in reports}
        # Against the bound of GDN.md's FLOPs and the least possible DRAM traffic (both modeled peaks).
        out["min_dram_bytes"] = min_dram_bytes(dims, tokens)
        out["bound_s"], out["bound_fraction"] = bound_fraction(out["modeled_s"], nominal_flops(shape),
                                                               out["min_dram_bytes"], fidelity)
        # The chunked scan alone (gate vectors + scan programs), against its own FLOPs and least DRAM
        # traffic, the bound taken at the HiFi2 peak whatever fidelity ran (issue 7's yardstick).
        scan_cycles = sum(r.cycles for r in reports if "_scan_" in r.program or "_gate_vectors_" in r.program)
        out["scan_modeled_s"] = scan_cycles / CLOCK_HZ
        out["scan_bound_s"], out["scan_bound_fraction"] = bound_fraction(
            out["scan_modeled_s"], nominal_flops(shape), scan_min_dram_bytes(shape), MathFidelity.HiFi2)
    if check and not timing_only:
        from ttprefill.reference.gdn import gdn_layer_core
        from ttprefill.reference.metrics import pcc, rel_rms

        y_ref, _, s_ref = gdn_layer_core(inputs["qkv"], inputs["z"], inputs["a"], inputs["b"], params,
                                         inputs["conv_state"], inputs["recurrent_state"], chunk)
        out["pcc"], out["rel_rms"] = pcc(y_ref, y), rel_rms(y_ref, y)
        out["state_pcc"], out["state_rel_rms"] = pcc(s_ref, state), rel_rms(s_ref, state)
    return out
