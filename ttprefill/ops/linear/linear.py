"""Host side of the dense op: resident weights and out = x @ W^T on DeviceTensors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.device.tensor import DeviceTensor

from .planner import DEFAULT_FIDELITY, LinearPlan, plan_linear
from .program import linear_programs
from .shapes import ACTIVATION_FORMATS, LinearShape, LinearShapeError


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
    if x.data_format not in ACTIVATION_FORMATS:
        raise LinearShapeError(f"x must be activations in one of {', '.join(f.name for f in ACTIVATION_FORMATS)}; "
                               f"got {x.data_format.name}")
    shape = LinearShape(x.shape[0], weight.k_in, weight.n_out, weight.data_format, out_format, fp32_acc,
                        in0_format=x.data_format)
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


# ---------------------------------------------------------------------------------------------------
# Projections too wide for one program (the LM head: 248k output columns): the weight is resident as
# column chunks, each a DenseWeight its own program can hold a block of; each chunk's output is its own
# tensor (the mirrored factory strides its output by the weight's width).

def max_chunk_columns(k_in: int, weight_format: DataFormat) -> int:
    """The widest output (8 core columns of equal blocks) a program can hold with one tile row per core
    and the planner's first K block width (taller inputs are cut into row slabs as usual)."""
    from ttprefill.hw import GRID_X, L1_CB_BUDGET_BYTES

    from .planner import K_BLOCK_WIDTHS, l1_bytes

    shape = LinearShape(1, k_in, 32, weight_format)
    bw = next(b for b in K_BLOCK_WIDTHS if shape.kt % b == 0)
    pcn = 1
    while l1_bytes(shape, 1, pcn + 1, bw) <= L1_CB_BUDGET_BYTES:
        pcn += 1
    return GRID_X * pcn * 32


@dataclass
class ChunkedDenseWeight:
    """W^T resident as column chunks [k_in, chunk] back to back (the last one narrower)."""

    chunks: list[DenseWeight]

    @classmethod
    def upload(cls, device, weight: np.ndarray, data_format: DataFormat = DataFormat.Float16_b,
               chunk_columns: int | None = None) -> "ChunkedDenseWeight":
        weight = np.asarray(weight, dtype=np.float32)
        n_out, k_in = weight.shape
        step = chunk_columns or max_chunk_columns(k_in, data_format)
        return cls([DenseWeight.upload(device, weight[c:c + step], data_format) for c in range(0, n_out, step)])

    @classmethod
    def allocate(cls, device, k_in: int, n_out: int, data_format: DataFormat,
                 chunk_columns: int | None = None) -> "ChunkedDenseWeight":
        """Chunks of the right shapes with no values written (timing-only runs)."""
        step = chunk_columns or max_chunk_columns(k_in, data_format)
        return cls([DenseWeight(device.allocate((k_in, min(step, n_out - c)), data_format), k_in, min(step, n_out - c))
                    for c in range(0, n_out, step)])

    @property
    def n_out(self) -> int:
        return sum(c.n_out for c in self.chunks)

    def free(self) -> None:
        for c in self.chunks:
            c.free()


def linear_chunked(device, x: DeviceTensor, weight: ChunkedDenseWeight, **options) -> list[DeviceTensor]:
    """x @ W^T chunk by chunk: one output tensor [tokens, chunk] per chunk, in column order."""
    return [linear(device, x, chunk, **options) for chunk in weight.chunks]


def split_query_gate(q_proj: np.ndarray, heads: int, head_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """q_proj [heads * 2 head_dim, k_in] -> (query rows, gate rows), each [heads * head_dim, k_in].

    The checkpoint's q_proj gives each head its query then its output gate; uploaded as two weights, the
    projections write the queries and the gates as two head-major tensors, which is what q_norm / RoPE
    and the output gate (o * sigmoid(gate), shaped like o) read."""
    q_proj = np.asarray(q_proj)
    if q_proj.ndim != 2 or q_proj.shape[0] != heads * 2 * head_dim:
        raise LinearShapeError(f"q_proj must be [{heads} * 2 * {head_dim}, k_in]; got {q_proj.shape}")
    per_head = q_proj.reshape(heads, 2, head_dim, q_proj.shape[1])
    return (per_head[:, 0].reshape(heads * head_dim, -1).copy(), per_head[:, 1].reshape(heads * head_dim, -1).copy())
