"""tt-metal's standalone chunk_gated_delta_rule program (the fused single-program variant: one reader,
one compute, one writer per value head), built the way its program factory builds it.

Kernels (ttnn 0.81.1, transformer/chunk_gated_delta_rule/device/kernels/):
    dataflow/reader_chunk_gated_delta_rule.cpp   RISCV_1: constants and s0 once, then q, k, v, g, beta per chunk
    compute/chunk_gated_delta_rule.cpp          the whole chunk recurrence, state kept in L1 (HiFi4, fp32 DST)
    dataflow/writer_chunk_gated_delta_rule.cpp   RISCV_0: o per chunk, the final state once

Layout the kernels expect (read from their page arithmetic):
    q, k   [BH, NC*C, K] bf16 tiled, value-head major (GQA heads already repeated to HV), q pre-scaled
    v      [BH, NC*C, V] bf16; o the same shape
    g, beta [B, T, HV] tiled, fp32 or bf16, token-major as the model produces them
    eye, tril (lower incl. diagonal), ones   [C, C] fp32 constants
    s0, final state  [BH, K, V] fp32
Padding rows (T..NC*C) of q, k, v are zero; the reader zeroes the gates there, so they change nothing.

Factory facts mirrored: head h on logical core (h // 8, h % 8) (the grid's 8 rows); the CB plan
(index, tiles, buffering, format) below; reader compile-time args (Ct, Kt, Vt) then one
TensorAccessorArgs per input in the order q, k, v, g, beta, eye, tril, ones, s0; writer (Ct, Kt, Vt)
then o, final state; runtime args reader (h, NC, 9 addresses, HV, T, g tile bytes, beta tile bytes),
writer (h, NC, o, final state), compute (NC). The stored factory source predates 0.81.1 (its compile-time
args carry a has_s0 flag the 0.81.1 kernels no longer read); the argument lists above follow the kernels.

Chunk 64 (Ct = 2) gives wrong results here: the three scratch CBs hold max(Ct*Ct, Ct*Kt, ...) tiles, the
compute pushes blocks of 1, Ct and Ct*Ct tiles through them, so a 4-tile block starts at slot 2 of the
4-tile CB 29 and runs 2 tiles into CB 30, which the next step writes while reading CB 29 (tt-metal's LLK
asserts this never happens; with asserts off the device spills exactly so, and the simulator does too).
Scratch CBs twice as large give pcc 0.99999. Either the 0.81.1 factory sizes them differently or the op
is wrong at chunk 64 on the device; the conformance entries use chunk 32, where spills land in free pages.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
)
from ttprefill.device.tensor import DeviceTensor
from ttprefill.ops.upstream import kernel_path
from ttprefill.ops.upstream.registry import expect_close, register
from ttprefill.hw import TILE

GRID_ROWS = 8
KERNEL_DIR = "transformer/chunk_gated_delta_rule/device/kernels/"
READER = KERNEL_DIR + "dataflow/reader_chunk_gated_delta_rule.cpp"
COMPUTE = KERNEL_DIR + "compute/chunk_gated_delta_rule.cpp"
WRITER = KERNEL_DIR + "dataflow/writer_chunk_gated_delta_rule.cpp"
IO = DataFormat.Float16_b
F32 = DataFormat.Float32


@dataclass(frozen=True)
class CgdrShape:
    batch: int
    heads: int  # value heads per batch row (HV); q/k heads are repeated to these on the host
    key_dim: int
    value_dim: int
    tokens: int
    chunk: int = 64
    gate_format: DataFormat = F32

    def __post_init__(self) -> None:
        for name in ("key_dim", "value_dim", "chunk"):
            if getattr(self, name) % TILE:
                raise ValueError(f"{name} must be a multiple of {TILE}, got {getattr(self, name)}")
        if self.bh > GRID_ROWS * GRID_ROWS:
            raise ValueError(f"{self.bh} heads exceed the 64 cores (one head per core)")

    @property
    def bh(self) -> int:
        return self.batch * self.heads

    @property
    def num_chunks(self) -> int:
        return -(-self.tokens // self.chunk)

    @property
    def padded_tokens(self) -> int:
        return self.num_chunks * self.chunk

    @property
    def ct(self) -> int:
        return self.chunk // TILE

    @property
    def kt(self) -> int:
        return self.key_dim // TILE

    @property
    def vt(self) -> int:
        return self.value_dim // TILE


@dataclass
class CgdrTensors:
    q: DeviceTensor
    k: DeviceTensor
    v: DeviceTensor
    g: DeviceTensor
    beta: DeviceTensor
    eye: DeviceTensor
    tril: DeviceTensor
    ones: DeviceTensor
    s0: DeviceTensor
    out: DeviceTensor
    final_state: DeviceTensor

    def inputs(self) -> list[DeviceTensor]:
        return [self.q, self.k, self.v, self.g, self.beta, self.eye, self.tril, self.ones, self.s0]


def allocate(device, s: CgdrShape) -> CgdrTensors:
    L = s.padded_tokens
    return CgdrTensors(
        q=device.allocate((s.bh, L, s.key_dim), IO),
        k=device.allocate((s.bh, L, s.key_dim), IO),
        v=device.allocate((s.bh, L, s.value_dim), IO),
        g=device.allocate((s.batch, s.tokens, s.heads), s.gate_format),
        beta=device.allocate((s.batch, s.tokens, s.heads), s.gate_format),
        eye=device.allocate((s.chunk, s.chunk), F32),
        tril=device.allocate((s.chunk, s.chunk), F32),
        ones=device.allocate((s.chunk, s.chunk), F32),
        s0=device.allocate((s.bh, s.key_dim, s.value_dim), F32),
        out=device.allocate((s.bh, L, s.value_dim), IO),
        final_state=device.allocate((s.bh, s.key_dim, s.value_dim), F32),
    )


def head_cores(s: CgdrShape) -> list[CoreCoord]:
    return [CoreCoord(h // GRID_ROWS, h % GRID_ROWS) for h in range(s.bh)]


def _circular_buffers(s: CgdrShape, cores: CoreRangeSet) -> list[CircularBuffer]:
    cc, ck, cv, kv, kc = s.ct * s.ct, s.ct * s.kt, s.ct * s.vt, s.kt * s.vt, s.kt * s.ct
    scratch = max(cc, ck, cv, kv, kc)
    # (index, tiles, buffers, format): the factory's plan, fp32 everywhere but q, k, v and o.
    plan = [
        (0, ck, 1, IO), (1, ck, 1, IO), (2, cv, 1, IO), (3, s.ct, 1, F32), (4, s.ct, 1, F32),
        (5, cc, 1, F32), (6, cc, 1, F32), (7, cc, 1, F32), (8, kv, 2, F32), (9, s.ct, 1, F32),
        (10, s.ct, 1, F32), (11, s.ct, 1, F32), (12, cc, 1, F32), (13, cc, 1, F32), (14, cv, 1, F32),
        (15, ck, 1, F32), (16, cv, 2, IO), (17, cv, 1, F32), (18, ck, 1, F32), (19, ck, 1, F32),
        (20, cc, 1, F32), (21, kv, 2, F32), (22, cv, 1, F32), (23, cv, 1, F32), (24, kc, 1, F32),
        (25, kv, 1, F32), (26, kv, 1, F32), (27, kv, 1, F32), (28, scratch, 1, F32), (29, scratch, 1, F32),
        (30, scratch, 1, F32), (31, kv, 2, F32),
    ]
    return [CircularBuffer(i, fmt, fmt.tile_bytes, n * nbuf, cores) for i, n, nbuf, fmt in plan]


def chunk_gated_delta_rule_program(device, s: CgdrShape, t: CgdrTensors | None = None) -> tuple[Program, CgdrTensors]:
    """The program for these shapes on `device` (allocating the tensors unless given)."""
    t = t or allocate(device, s)
    cores_list = head_cores(s)
    cores = CoreRangeSet.of(cores_list)
    ct_args = [s.ct, s.kt, s.vt]
    reader_ct = list(ct_args)
    for tensor in t.inputs():
        reader_ct += tensor.accessor_args()
    writer_ct = ct_args + t.out.accessor_args() + t.final_state.accessor_args()
    # The factory's ReaderConfigDescriptor / WriterConfigDescriptor.
    reader = Kernel(kernel_path(READER), Role.RISCV_1, cores, reader_ct, noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(WRITER), Role.RISCV_0, cores, writer_ct, noc=DRAM_WRITE_NOC)
    compute = Kernel(kernel_path(COMPUTE), Role.COMPUTE, cores, list(ct_args),
                     compute_config=ComputeConfig(MathFidelity.HiFi4, fp32_dest_acc_en=True, math_approx_mode=False))
    nc = s.num_chunks
    for h, core in enumerate(cores_list):
        reader.runtime_args[core] = [h, nc, *(x.address for x in t.inputs()), s.heads, s.tokens,
                                     t.g.page_size, t.beta.page_size]
        writer.runtime_args[core] = [h, nc, t.out.address, t.final_state.address]
        compute.runtime_args[core] = [nc]
    program = Program([reader, writer, compute], _circular_buffers(s, cores),
                      inputs={n: getattr(t, n) for n in ("q", "k", "v", "g", "beta", "s0")},
                      outputs={"out": t.out, "final_state": t.final_state}, name="upstream_chunk_gated_delta_rule")
    return program, t


def constants(chunk: int) -> dict[str, np.ndarray]:
    return {"eye": np.eye(chunk, dtype=np.float32), "tril": np.tril(np.ones((chunk, chunk), np.float32)),
            "ones": np.ones((chunk, chunk), np.float32)}


def head_major(x: np.ndarray, batch: int, rows: int) -> np.ndarray:
    """[B, T, heads, D] -> [B*heads, rows, D], zero rows past T."""
    B, T, H, D = x.shape
    out = np.zeros((batch * H, rows, D), np.float32)
    out[:, :T] = np.transpose(x, (0, 2, 1, 3)).reshape(B * H, T, D)
    return out


def upload(device, s: CgdrShape, t: CgdrTensors, q, k, v, g, beta, s0) -> None:
    """Write model-layout inputs: q, k [B, T, H, K] (q already scaled), v [B, T, HV, V], g, beta [B, T, HV],
    s0 [B, HV, K, V]. q and k heads are repeated to the value heads here, as the op's host side does."""
    group = s.heads // q.shape[2]
    q, k = (np.repeat(x, group, axis=2) for x in (q, k))
    L = s.padded_tokens
    device.write(t.q, head_major(q, s.batch, L))
    device.write(t.k, head_major(k, s.batch, L))
    device.write(t.v, head_major(v, s.batch, L))
    device.write(t.g, np.asarray(g, np.float32))
    device.write(t.beta, np.asarray(beta, np.float32))
    for name, value in constants(s.chunk).items():
        device.write(getattr(t, name), value)
    device.write(t.s0, np.asarray(s0, np.float32).reshape(s.bh, s.key_dim, s.value_dim))


def results(device, s: CgdrShape, t: CgdrTensors) -> tuple[np.ndarray, np.ndarray]:
    """o [B, T, HV, V] and the final state [B, HV, K, V] as float64."""
    o = device.download(t.out)[:, : s.tokens].reshape(s.batch, s.heads, s.tokens, s.value_dim)
    state = device.download(t.final_state).reshape(s.batch, s.heads, s.key_dim, s.value_dim)
    return np.transpose(o, (0, 2, 1, 3)).astype(np.float64), state.astype(np.float64)


# ----------------------------------------------------------------------------- conformance
def _check(device, s: CgdrShape, q_heads: int, seed: int) -> dict:
    from ttprefill.device.formats import round_to_bf16
    from ttprefill.reference import gdn as ref
    from ttprefill.reference.inputs import gdn_inputs

    rng = np.random.default_rng(seed)
    per_batch = [gdn_inputs(s.tokens, q_heads, s.heads, s.key_dim, s.value_dim, 1.0, rng) for _ in range(s.batch)]
    stack = {key: np.stack([d[key] for d in per_batch]) for key in per_batch[0]}
    for key in ("q", "k", "v"):  # the reference sees what the device sees
        stack[key] = round_to_bf16(stack[key].astype(np.float32)).astype(np.float64)
    if s.gate_format == IO:
        for key in ("g", "beta"):
            stack[key] = round_to_bf16(stack[key].astype(np.float32)).astype(np.float64)
    program, t = chunk_gated_delta_rule_program(device, s)
    upload(device, s, t, stack["q"], stack["k"], stack["v"], stack["g"], stack["beta"], stack["initial_state"])
    report = device.run(program)
    o, state = results(device, s, t)
    metrics = {"cycles": report.cycles}
    for b, d in enumerate(per_batch):
        o_ref, s_ref = ref.gdn_recurrent(stack["q"][b], stack["k"][b], stack["v"][b], stack["g"][b],
                                         stack["beta"][b], stack["initial_state"][b])
        metrics |= expect_close(o_ref, o[b], f"o_batch{b}", 0.999, 0.01)
        metrics |= expect_close(s_ref, state[b], f"state_batch{b}", 0.999, 0.01)
    return metrics


SMALL_SHAPE = CgdrShape(1, 2, 64, 64, 100, 32)  # four chunks (the last partly padding); GQA 1:2, fp32 gates
# Batch 2 (the reader finds each head's gates in the token-major batch rows), bf16 gates, two chunks of 32.
BATCHED_SHAPE = CgdrShape(2, 2, 32, 64, 64, 32, IO)


@register("chunk_gated_delta_rule/b1_hv2_gqa_k64_v64_t100_c32", "transformer", (READER, COMPUTE, WRITER),
          build=lambda device: chunk_gated_delta_rule_program(device, SMALL_SHAPE)[0])
def _cgdr_small(device) -> dict:
    return _check(device, SMALL_SHAPE, q_heads=1, seed=1)


@register("chunk_gated_delta_rule/b2_hv2_k32_v64_t64_c32_bf16_gates", "transformer", (READER, COMPUTE, WRITER),
          build=lambda device: chunk_gated_delta_rule_program(device, BATCHED_SHAPE)[0])
def _cgdr_batched(device) -> dict:
    return _check(device, BATCHED_SHAPE, q_heads=2, seed=2)
