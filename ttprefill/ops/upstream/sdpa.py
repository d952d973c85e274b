"""tt-metal's SDPA prefill program (ttnn.transformer.scaled_dot_product_attention) for the plain case: causal,
no mask tensor, no paged/chunked K/V, no sink, no sliding window, interleaved DRAM, GQA by head ratio.

Kernels (ttnn 0.81.1, transformer/sdpa/device/kernels/):
    dataflow/reader_interleaved.cpp  RISCV_1: Q chunk, then K and V chunks up to the diagonal
    compute/sdpa.cpp                 flash attention over each Q chunk (online softmax)
    dataflow/writer_interleaved.cpp  RISCV_0: builds the causal mask and scalar tiles, writes O

Tensors: q [B, NQH, Sq, D], k and v [B, NKH, Sk, D], o [B, NQH, Sq, D], bf16, tiled.

Where the facts come from. The argument lists (every compile-time slot, the CB-id blocks after the
tensor accessors, runtime arg positions) are read from the 0.81.1 kernels themselves. The host policy
is the program factory's (sdpa_program_factory.cpp; the stored revision predates 0.81.1 but its policy
carries over): Q/K chunk sizes default to 32 tokens, CB sizes (Q single- or double-buffered, K/V double,
statistics one column per Q tile row), CB formats (bf16 intermediates and statistics), subblock choice and granularities (largest subblock within DST, largest divisor within DST),
the identity scalar (bf16 1.0 twice), the scale as fp32 bits, and compute config (HiFi2, approx exp, no fp32
DST: the device operation's defaults). 0.81.1 schedules Q chunks globally: every core takes a contiguous
range of the flat (batch, head, Q chunk) index, remapped zigzag for causal balance (q_chunk_remapping.hpp);
we give each of up to 64 cores an equal share, in core order x-major within a row. Semaphores, multicast,
K/V chains and windowing are off in this case, so their slots are zero and their CB ids fall back to 0,
as the kernels' comments describe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ttprefill.device.formats import fp32_bits
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

GRID = (8, 8)
KERNEL_DIR = "transformer/sdpa/device/kernels/"
READER = KERNEL_DIR + "dataflow/reader_interleaved.cpp"
WRITER = KERNEL_DIR + "dataflow/writer_interleaved.cpp"
COMPUTE = KERNEL_DIR + "compute/sdpa.cpp"
BF16 = DataFormat.Float16_b

# Circular buffers the factory creates, by role.
CB_Q, CB_K, CB_V, CB_MASK, CB_SINK, CB_IDENTITY, CB_PAGE_TABLE, CB_COL_IDENTITY = 0, 1, 2, 3, 4, 5, 6, 7
CB_CHUNK_START_COMPUTE, CB_CHUNK_START_WRITER, CB_OUT = 8, 9, 16
CB_QK_IM, CB_OUT_IM_A, CB_OUT_IM_B, CB_MAX_A, CB_MAX_B, CB_SUM_A, CB_SUM_B, CB_EXP_MAX_DIFF = range(24, 32)
CB_UNUSED = 0  # the id a kernel gets for a CB its configuration never touches
# A null TensorAccessorArgs (absent optional tensor): config word None, no page size.
NULL_ACCESSOR = [0, 0]
IDENTITY_SCALAR_PACKED = 0x3F803F80  # bf16 1.0 in both halves
# The causal mask without a mask tensor is 0.81.1's "lightweight" palette: the writer fills two tiles
# once (all -inf, then the causal diagonal) and compute L1-accumulates them onto the scores. The diagonal
# tile is written as bf16 words (dataflow_common.hpp fill_causal_diagonal_tile_bf16, sized by the CB's
# tile size), and compute waits for exactly these two tiles (sdpa.cpp), so the CB holds two Float16_b
# tiles. The stored factory revision predates the palette (it sized a Bfp4_b mask of 2 Q x K chunks);
# this format and size are read from the 0.81.1 kernels, not from a factory.
MASK_FORMAT = DataFormat.Float16_b
LIGHTWEIGHT_MASK_TILES = 2


@dataclass(frozen=True)
class SdpaShape:
    batch: int
    q_heads: int
    kv_heads: int
    head_dim: int
    seq: int  # Sq == Sk for prefill
    q_chunk: int = 32
    k_chunk: int = 32
    fidelity: MathFidelity = MathFidelity.HiFi2
    fp32_dest_acc: bool = False
    exp_approx: bool = True  # SDPAProgramConfig exp_approx_mode (the EXP_APPROX_MODE define)
    math_approx: bool = True  # the compute config's math_approx_mode (the op's default and the demo's)
    # The tensors' formats: the factory gives the Q, K, V and output CBs their tensors' formats (bf16 or
    # bfp8, as tt-metal's Qwen3.5 demo casts Q/K/V to bfp8 in its bf8 mode); intermediates stay bf16.
    q_format: DataFormat = DataFormat.Float16_b
    kv_format: DataFormat = DataFormat.Float16_b
    out_format: DataFormat = DataFormat.Float16_b

    def __post_init__(self) -> None:
        if self.head_dim % TILE or self.q_chunk % TILE or self.k_chunk % TILE:
            raise ValueError("head_dim, q_chunk and k_chunk must be multiples of 32")
        if self.q_heads % self.kv_heads:
            raise ValueError(f"q heads ({self.q_heads}) must be a multiple of kv heads ({self.kv_heads})")

    @property
    def scale(self) -> float:
        return 1.0 / math.sqrt(self.head_dim)


@dataclass(frozen=True)
class SdpaPlan:
    """The numbers the factory derives from the shape."""

    Sqt: int
    Skt: int
    valid_Sqt: int
    valid_Skt: int
    DHt: int
    Sq_chunk_t: int
    Sk_chunk_t: int
    q_num_chunks: int
    k_num_chunks: int
    dst_size: int
    qk_subblock: tuple[int, int]  # (h, w)
    out_subblock: tuple[int, int]
    granularity: dict[str, int]
    cores: list[CoreCoord]
    q_ranges: list[tuple[int, int]]  # per core: (global_q_start, global_q_count)


def largest_subblock(block_h: int, block_w: int, dst_size: int) -> tuple[int, int]:
    """The factory's subblock: the first (h, w) of its preference list that fits DST and divides the block."""
    order = [(2, 4), (4, 2), (1, 8), (8, 1), (1, 7), (7, 1), (2, 3), (3, 2), (1, 6), (6, 1),
             (1, 5), (5, 1), (2, 2), (1, 4), (4, 1), (1, 3), (3, 1), (1, 2), (2, 1), (1, 1)]
    for h, w in order:
        if h * w <= dst_size and block_h % h == 0 and block_w % w == 0:
            return h, w
    return 1, 1


def valid_granularity(tiles: int, limit: int) -> int:
    """Largest value <= limit that divides tiles."""
    g = min(tiles, limit)
    while g > 1 and tiles % g:
        g -= 1
    return g


def plan(s: SdpaShape, max_cores: int = GRID[0] * GRID[1]) -> SdpaPlan:
    padded_q = -(-s.seq // s.q_chunk) * s.q_chunk
    padded_k = -(-s.seq // s.k_chunk) * s.k_chunk
    Sq_chunk_t, Sk_chunk_t = s.q_chunk // TILE, s.k_chunk // TILE
    DHt = s.head_dim // TILE
    dst = 4 if s.fp32_dest_acc else 8
    qk = largest_subblock(Sq_chunk_t, Sk_chunk_t, dst)
    out = largest_subblock(Sq_chunk_t, DHt, dst)
    gran = {
        "STATS_GRANULARITY": valid_granularity(Sq_chunk_t, dst),
        "SUB_EXP_GRANULARITY": valid_granularity(Sk_chunk_t, dst),
        "MUL_BCAST_GRANULARITY": valid_granularity(Sq_chunk_t * Sk_chunk_t, dst),
        "DHT_GRANULARITY": valid_granularity(DHt, dst),
        "REDUCE_GRANULARITY": valid_granularity(Sq_chunk_t, dst // 2),
    }
    q_num_chunks = padded_q // s.q_chunk
    total = s.batch * s.q_heads * q_num_chunks
    n = min(max_cores, total)
    base, extra = divmod(total, n)
    ranges, start = [], 0
    for i in range(n):
        count = base + (1 if i < extra else 0)
        ranges.append((start, count))
        start += count
    cores = [CoreCoord(i % GRID[0], i // GRID[0]) for i in range(n)]
    return SdpaPlan(padded_q // TILE, padded_k // TILE, -(-s.seq // TILE), -(-s.seq // TILE), DHt, Sq_chunk_t,
                    Sk_chunk_t, q_num_chunks, padded_k // s.k_chunk, dst, qk, out, gran, cores, ranges)


@dataclass
class SdpaTensors:
    q: DeviceTensor
    k: DeviceTensor
    v: DeviceTensor
    out: DeviceTensor


def allocate(device, s: SdpaShape) -> SdpaTensors:
    qshape = (s.batch, s.q_heads, s.seq, s.head_dim)
    kshape = (s.batch, s.kv_heads, s.seq, s.head_dim)
    return SdpaTensors(device.allocate(qshape, s.q_format), device.allocate(kshape, s.kv_format),
                       device.allocate(kshape, s.kv_format), device.allocate(qshape, s.out_format))


def _circular_buffers(s: SdpaShape, p: SdpaPlan, cores: CoreRangeSet) -> list[CircularBuffer]:
    q_per_core = max(count for _, count in p.q_ranges)
    q_tiles = p.Sq_chunk_t * p.DHt * (2 if q_per_core > 1 else 1)
    stats = p.Sq_chunk_t
    out_tiles = p.Sq_chunk_t * p.DHt
    plan_ = [
        (CB_Q, q_tiles, s.q_format), (CB_K, p.Sk_chunk_t * p.DHt * 2, s.kv_format),
        (CB_V, p.Sk_chunk_t * p.DHt * 2, s.kv_format),
        (CB_MASK, LIGHTWEIGHT_MASK_TILES, MASK_FORMAT), (CB_IDENTITY, 1, BF16), (CB_COL_IDENTITY, 1, BF16),
        (CB_OUT, out_tiles, s.out_format), (CB_QK_IM, p.Sq_chunk_t * p.Sk_chunk_t, BF16), (CB_OUT_IM_A, out_tiles, BF16),
        (CB_OUT_IM_B, out_tiles, BF16), (CB_MAX_A, stats, BF16), (CB_MAX_B, stats, BF16), (CB_SUM_A, stats, BF16),
        (CB_SUM_B, stats, BF16), (CB_EXP_MAX_DIFF, stats, BF16),
    ]
    return [CircularBuffer(i, fmt, fmt.tile_bytes, n, cores) for i, n, fmt in sorted(plan_)]


def sdpa_program(device, s: SdpaShape, t: SdpaTensors | None = None, max_cores: int = 64) -> tuple[Program, SdpaTensors]:
    """The causal SDPA program for these shapes (allocating the tensors unless given)."""
    t = t or allocate(device, s)
    p = plan(s, max_cores)
    cores = CoreRangeSet.of(p.cores)
    n = len(p.cores)
    zigzag = 1  # causal
    k_partial_col = s.seq % TILE
    scale = fp32_bits(s.scale)
    qk_h, qk_w = p.qk_subblock
    out_h, out_w = p.out_subblock

    reader_ct = [s.batch, s.q_heads, s.kv_heads, s.kv_heads, p.Skt, p.valid_Sqt, p.valid_Skt, p.DHt, p.DHt,
                 p.Sq_chunk_t, p.q_num_chunks, p.Sk_chunk_t, p.k_num_chunks, n,
                 1, 0, 0, 0, 0, 0, 0, 0,  # causal; no mask (nor its broadcasts), no padding mask, not chunked
                 0, 0, 0,  # no sink, no MLA
                 qk_h, 0, 0,  # qk subblock height; no sliding window; no streaming compute (causal)
                 0, 0, 0, 0,  # chain semaphores, multicast: off
                 zigzag, 0, 0, 0,  # zigzag; no windowing, no K/V chain, no mask block map
                 2, 0]  # K/V CBs hold two chunks; no forward-done semaphore
    reader_ct += t.q.accessor_args() + t.k.accessor_args() + t.v.accessor_args() + NULL_ACCESSOR * 7
    reader_ct += [CB_Q, CB_K, CB_V, CB_MASK, CB_SINK, CB_PAGE_TABLE, CB_CHUNK_START_COMPUTE, CB_CHUNK_START_WRITER,
                  CB_UNUSED, CB_UNUSED, CB_UNUSED, CB_UNUSED]

    writer_ct = [s.batch, s.q_heads, p.valid_Sqt, s.seq, p.DHt, p.Sq_chunk_t, p.q_num_chunks, p.Sk_chunk_t,
                 # causal, no provided/padded mask, not chunked, no window; the lightweight mask palette
                 # (neginf + causal diagonal), which sdpa.cpp's causal path waits for; no streaming
                 p.k_num_chunks, IDENTITY_SCALAR_PACKED, n, 1, 0, 0, 0, 0, 1, 0, out_h, k_partial_col, zigzag,
                 0, 0, 0, 0, 0, 0, 0]
    writer_ct += t.out.accessor_args() + NULL_ACCESSOR * 2
    writer_ct += [CB_MASK, CB_IDENTITY, CB_COL_IDENTITY, CB_CHUNK_START_WRITER, CB_OUT, CB_UNUSED, CB_UNUSED, CB_UNUSED]

    compute_ct = [p.Skt, p.DHt, p.DHt, p.Sq_chunk_t, p.q_num_chunks, p.Sk_chunk_t, p.k_num_chunks,
                  p.DHt, qk_w, qk_h, p.Sq_chunk_t // qk_h, p.Sk_chunk_t // qk_w,
                  p.Sk_chunk_t, out_w, out_h, p.Sq_chunk_t // out_h, p.DHt // out_w,
                  1, 0, 0, 0, scale, 0, 0, 0, p.valid_Skt, k_partial_col, zigzag, 0]
    compute_ct += [CB_Q, CB_K, CB_V, CB_MASK, CB_SINK, CB_IDENTITY, CB_COL_IDENTITY, CB_CHUNK_START_COMPUTE,
                   CB_UNUSED, CB_OUT, CB_QK_IM, CB_OUT_IM_A, CB_OUT_IM_B, CB_MAX_A, CB_MAX_B, CB_SUM_A, CB_SUM_B,
                   CB_EXP_MAX_DIFF, CB_UNUSED]

    defines = {k: str(v) for k, v in p.granularity.items()}
    defines["EXP_APPROX_MODE"] = "1" if s.exp_approx else "0"
    # The factory's ReaderDataMovementConfig / WriterDataMovementConfig.
    reader = Kernel(kernel_path(READER), Role.RISCV_1, cores, reader_ct, defines=dict(defines), noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(WRITER), Role.RISCV_0, cores, writer_ct, defines=dict(defines), noc=DRAM_WRITE_NOC)
    # The simulator compiles one compute image playing the math thread (MATH() active); sdpa keeps its
    # raw SFPI helpers under TRISC_MATH as in tt-metal's math-thread build, so that build's define is set;
    # ARCH_WORMHOLE as tt-metal's Wormhole build (the device the simulator models), which picks the
    # no-MOP matmul and custom broadcast-subtract headers.
    compute = Kernel(kernel_path(COMPUTE), Role.COMPUTE, cores, compute_ct, defines=dict(defines, TRISC_UNPACK="1", TRISC_MATH="1", TRISC_PACK="1", ARCH_WORMHOLE="1"),
                     compute_config=ComputeConfig(s.fidelity, s.fp32_dest_acc, s.math_approx))
    for core, (start, count) in zip(p.cores, p.q_ranges):
        # num_phases 1, no chunk offset, no read/write offset; then this core's global Q range.
        reader.runtime_args[core] = [t.q.address, t.k.address, t.v.address, 0, 0, 0, 0, 1, 0, 0, start, count]
        writer.runtime_args[core] = [t.out.address, 1, 0, 0, 0, 0, 0, start, count, 0, 0]
        compute.runtime_args[core] = [1, 0, 0, 0, start, count]
    program = Program([reader, writer, compute], _circular_buffers(s, p, cores),
                      inputs={"q": t.q, "k": t.k, "v": t.v}, outputs={"out": t.out}, name="upstream_sdpa")
    return program, t


# ----------------------------------------------------------------------------- conformance
def _check(device, s: SdpaShape, seed: int) -> dict:
    from ttprefill.device.formats import round_to_bf16
    from ttprefill.reference.attention import causal_attention

    rng = np.random.default_rng(seed)
    q = round_to_bf16(rng.standard_normal((s.batch, s.q_heads, s.seq, s.head_dim)).astype(np.float32))
    k = round_to_bf16(rng.standard_normal((s.batch, s.kv_heads, s.seq, s.head_dim)).astype(np.float32))
    v = round_to_bf16(rng.standard_normal((s.batch, s.kv_heads, s.seq, s.head_dim)).astype(np.float32))
    program, t = sdpa_program(device, s)
    device.write(t.q, q)
    device.write(t.k, k)
    device.write(t.v, v)
    report = device.run(program)
    out = device.download(t.out)
    metrics = {"cycles": report.cycles}
    for b in range(s.batch):
        # The reference takes [S, heads, D]; prefill is p0 = 0.
        ref = causal_attention(q[b].transpose(1, 0, 2), k[b].transpose(1, 0, 2), v[b].transpose(1, 0, 2), 0,
                               scale=s.scale)
        metrics |= expect_close(ref, out[b].transpose(1, 0, 2), f"o_batch{b}", 0.999, 0.02)
    return metrics


# Conformance shapes, small enough for seconds each. Chunked prefill (a prefix in a paged cache) is not
# in this mirror (it takes the plain case only), so no entry covers it.
CONFORMANCE_SHAPES = {
    # GQA 2:1, four Q chunks per head: zigzag ranges span heads and chunks
    "sdpa/causal_b1_q4_kv2_d64_s128": SdpaShape(1, 4, 2, 64, 128),
    # batch 2, 64-token chunks over 96 tokens: a half-padded last chunk
    "sdpa/causal_b2_q2_kv1_d128_s96_chunk64": SdpaShape(2, 2, 1, 128, 96, 64, 64),
    "sdpa/causal_b1_q2_kv1_d256_s64": SdpaShape(1, 2, 1, 256, 64),
    "sdpa/causal_b1_q2_kv1_d64_s256_chunk128": SdpaShape(1, 2, 1, 64, 256, 128, 128),
    # Q chunks twice the K chunks, and the reverse: the diagonal falls inside a chunk
    "sdpa/causal_b1_q4_kv1_d64_s192_q64_k32": SdpaShape(1, 4, 1, 64, 192, 64, 32),
    "sdpa/causal_b1_q3_kv1_d128_s160_q32_k64": SdpaShape(1, 3, 1, 128, 160, 32, 64),
    # 80 tokens: the last tile holds 16 valid rows and columns
    "sdpa/causal_b1_q2_kv2_d64_s80": SdpaShape(1, 2, 2, 64, 80),
    # the accurate exp (scale applied by mul_unary_tile, clamped exp) and 32-bit DST
    "sdpa/causal_b1_q2_kv1_d64_s128_chunk64_exact_exp": SdpaShape(1, 2, 1, 64, 128, 64, 64, exp_approx=False),
    "sdpa/causal_b1_q2_kv1_d64_s128_chunk64_fp32_dest": SdpaShape(1, 2, 1, 64, 128, 64, 64, fp32_dest_acc=True),
    # the Qwen3.5 demo's bf8 mode: bfp8 Q, K, V and output, fp32 DST, the accurate exp
    "sdpa/causal_b1_q2_kv1_d64_s128_chunk64_bfp8": SdpaShape(
        1, 2, 1, 64, 128, 64, 64, fp32_dest_acc=True, exp_approx=False, q_format=DataFormat.Bfp8_b,
        kv_format=DataFormat.Bfp8_b, out_format=DataFormat.Bfp8_b),
}


def _register_conformance(name: str, shape: SdpaShape, seed: int) -> None:
    @register(name, "transformer", (READER, COMPUTE, WRITER), build=lambda device: sdpa_program(device, shape)[0])
    def _entry(device) -> dict:
        return _check(device, shape, seed)


for _seed, (_name, _shape) in enumerate(CONFORMANCE_SHAPES.items(), start=3):
    _register_conformance(_name, _shape, _seed)
