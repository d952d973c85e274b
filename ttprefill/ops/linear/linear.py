"""Host side of the dense op: resident weights and out = x @ W^T on DeviceTensors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.device.tensor import DeviceTensor

from .planner import DEFAULT_FIDELITY, LinearPlan, plan_linear
from .program import linear_programs
from .shapes import LinearShape, LinearShapeError


@dataclass
class DenseWeight:
    """A projection weight resident in device DRAM as W^T [k_in, n_out] (the matmul's in1), uploaded once.

    The checkpoint stores W [n_out, k_in]; the transpose happens once on the host at upload."""

    tensor: DeviceTensor
    k_in: int
    n_out: int

    @classmethod
    def upload(cls, device, weight: np.ndarray, data_format: DataFormat = DataFormat.Float16_b) -> "DenseWeight":
        weight = np.asarray(weight, dtype=np.float32)
        if weight.ndim != 2:
            raise LinearShapeError(f"a projection weight is [n_out, k_in]; got shape {weight.shape}")
        n_out, k_in = weight.shape
        LinearShape(1, k_in, n_out, weight_format=data_format)  # validates the format
        return cls(device.upload(np.ascontiguousarray(weight.T), data_format), k_in, n_out)

    @property
    def data_format(self) -> DataFormat:
        return self.tensor.data_format

    def free(self) -> None:
        self.tensor.device.free(self.tensor)


def plan_for(x: DeviceTensor, weight: DenseWeight, out_format: DataFormat = DataFormat.Float16_b,
             fp32_acc: bool = False, fidelity: MathFidelity = DEFAULT_FIDELITY) -> LinearPlan:
    if x.shape[-1] != weight.k_in or len(x.shape) != 2:
        raise LinearShapeError(f"x must be [tokens, {weight.k_in}] for this weight; got {x.shape}")
    if x.data_format is not DataFormat.Float16_b:
        raise LinearShapeError(f"x must be bf16 (Float16_b) activations; got {x.data_format.name}")
    shape = LinearShape(x.shape[0], weight.k_in, weight.n_out, weight.data_format, out_format, fp32_acc)
    return plan_linear(shape, fidelity=fidelity)


def linear(device, x: DeviceTensor, weight: DenseWeight, out: DeviceTensor | None = None, *,
           out_format: DataFormat = DataFormat.Float16_b, fp32_acc: bool = False,
           fidelity: MathFidelity = DEFAULT_FIDELITY, plan: LinearPlan | None = None,
           reports: list | None = None) -> DeviceTensor:
    """out [tokens, n_out] = x [tokens, k_in] @ W^T, every row slab a program on the device.

    out is allocated unless given (then it must be [tokens, n_out]); each run's report is appended to
    `reports` when a list is passed."""
    plan = plan or plan_for(x, weight, out_format, fp32_acc, fidelity)
    if out is None:
        out = device.allocate((x.shape[0], weight.n_out), plan.shape.out_format)
    elif out.shape != (x.shape[0], weight.n_out) or out.data_format is not plan.shape.out_format:
        raise LinearShapeError(f"out must be [{x.shape[0]}, {weight.n_out}] {plan.shape.out_format.name}; "
                               f"got {out.shape} {out.data_format.name}")
    for program in linear_programs(device, x, weight.tensor, out, plan):
        report = device.run(program)
        if reports is not None:
            reports.append(report)
    return out


def linear_host(device, x: np.ndarray, weight: np.ndarray, *, weight_format: DataFormat = DataFormat.Float16_b,
                **options) -> np.ndarray:
    """x [tokens, k_in] @ weight[n_out, k_in]^T through the device (upload, run, download, free):
    for tests and one-off use; a model keeps its DenseWeights resident."""
    w = DenseWeight.upload(device, weight, weight_format)
    tx = device.upload(np.asarray(x, np.float32), DataFormat.Float16_b)
    try:
        out = linear(device, tx, w, **options)
        try:
            return device.download(out)
        finally:
            device.free(out)
    finally:
        device.free(tx)
        w.free()
