"""The element-wise ops of the layer stack on DeviceTensors (bf16 activations in DRAM)."""

from __future__ import annotations

import numpy as np

from ttprefill.device.program import DataFormat
from ttprefill.device.tensor import DeviceTensor

from .program import binary_program


def _run(device, a: DeviceTensor, b: DeviceTensor, out: DeviceTensor | None, op: str, reports: list | None,
         **acts) -> DeviceTensor:
    if a.shape != b.shape:
        raise ValueError(f"operands differ in shape: {a.shape} and {b.shape}")
    if out is None:
        out = device.allocate(a.shape, a.data_format)
    report = device.run(binary_program(a, b, out, op, **acts))
    if reports is not None:
        reports.append(report)
    return out


def residual_add(device, x: DeviceTensor, y: DeviceTensor, out: DeviceTensor | None = None, *,
                 reports: list | None = None) -> DeviceTensor:
    """x + y (out may be x itself: each tile is read before its sum is written)."""
    return _run(device, x, y, out, "add", reports)


def silu_mul(device, gate: DeviceTensor, up: DeviceTensor, out: DeviceTensor | None = None, *,
             reports: list | None = None) -> DeviceTensor:
    """silu(gate) * up: the MLP's activation between gate/up and down projections."""
    return _run(device, gate, up, out, "mul", reports, lhs="silu")


def sigmoid_gate(device, o: DeviceTensor, gate: DeviceTensor, out: DeviceTensor | None = None, *,
                 reports: list | None = None) -> DeviceTensor:
    """o * sigmoid(gate): the attention output gate ([tokens, Hq * D], head-major like o)."""
    return _run(device, o, gate, out, "mul", reports, rhs="sigmoid")


def run_host(device, fn, a: np.ndarray, b: np.ndarray, fmt: DataFormat = DataFormat.Float16_b) -> np.ndarray:
    """fn(device, A, B) on uploaded copies of a and b, downloaded and freed: for tests."""
    ta, tb = device.upload(np.asarray(a, np.float32), fmt), device.upload(np.asarray(b, np.float32), fmt)
    try:
        out = fn(device, ta, tb)
        try:
            return device.download(out)
        finally:
            device.free(out)
    finally:
        device.free(ta)
        device.free(tb)
