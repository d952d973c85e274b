"""GDN prefill on the device: the stages of one Gated DeltaNet layer between its in-projections and its
out-projection (shared/GDN.md), as five or six programs (the scan is one fused program or two).

Programs and what each fuses (kernels in kernels/gdn/):

1. conv (conv_*.cpp): causal depthwise conv1d (kernel 4) + SiLU over the qkv channels, with the conv
   state in and out, fused with the L2 normalisation of every q and k head and the K^-1/2 scaling of
   q. Work unit: one head's channel tiles (a q or k head, or one v tile) over a range of token tiles.
   The conv is exact in fp32: 0/1 shift matrices (written by the reader) pick the earlier rows on the
   FPU, exactly for bf16 input; the taps are weighted and summed on the SFPU. The norm's sum of squares
   is a matmul with a ones tile that lands as a column broadcast, so the scaling is an SFPU product.
   The conv state is moved row by row by the reader: carried bits, never rounded.
2. gates (gates_*.cpp): beta = sigmoid(b), g = -exp(A_log) * softplus(a + dt_bias), fp32, element-wise
   on the compact [T, HV] tiles (32 heads per tile, so the SFPU work is small).
3. gate vectors (gate_vectors_*.cpp), the scan's first program: per (chunk, 32 value heads) the
   cumulative decay gam and every exp of it the scan needs (gate_vectors.h), still 32 heads per tile,
   written head-major so the scan's readers fetch one head's 32-token row in two 64-byte reads. This
   takes all the chunk-level exps off the scan's per-head cores: what is left there is one exp per
   diagonal decay tile.
4. scan preparation (scan_prep_*.cpp): per (value head, chunk), spread over the cores: the decay
   tiles, A, T = (I + A)^-1 and the record P, T~ = T diag(beta), -T^ = -T diag(beta exp(gam))
   (scan_prep_chunk.h says how each is formed and why it is accurate).
5. scan sequential pass (scan_seq_*.cpp): per (value head, block of value columns), chunk after chunk,
   with the fp32 state block resident in L1: k h, Vnew = T~ v + (-T^)(k h) (U - W h regrouped, so W
   and U are never formed), O and the state update, reading q, k, v (bf16), the gate vectors and the
   records; checkpoints and the final state written on the way. The value block is chosen by a small
   cost model (default_value_block): narrow blocks spread few heads over many cores, wide ones read
   each head's records once.
6. gated RMSNorm (norm_*.cpp): y = w * (o * rsqrt(mean(o^2) + eps)) * silu(z), per (token tile, value
   head).
4+5 fused (scan_fused_program): one value head per core, each chunk's preparation formed in L1 right
   before the sequential step that consumes it (scan_prep_reader.cpp and scan_seq_compute.cpp built with
   GDN_SCAN_FUSED; the preparation is shared code, scan_prep_chunk.h), so the records never make the
   DRAM round trip, and the state-side products that need no preparation (k h, K~^T) run in the waits of
   the inverse's dependent steps. The cores the heads leave idle are helpers (scan_offload.h,
   helper_plan): each prepares a share of the chunks of up to three heads (29 of every 64 for the 27B
   shape's 48 heads on 16 helpers, forming a q/k group's k k^T and q k^T once, while the first head's
   decay exps run on the pack thread) and writes the records straight into the heads' L1, so the head
   cores only prepare the rest. Same arithmetic, same bits as 4 then 5, with or without helpers. Chosen
   when the value heads fill at least half the cores (fused_scan_by_default: the 27B shape's 48 heads);
   with few heads the two programs spread the work wider. Modeled at 8192 tokens of the 27B shape
   (HiFi3): 1.80M cycles plus 0.09M for the gate vectors, 0.51 of the scan's DRAM bound (4.11M before
   the gate vectors, the regrouping and the helpers). Both kinds of core are now limited by their
   unpackers: fp32 operands (h, kh, Vnew, T~, -T^, P, K~^T, q~) cost twice a bf16 tile, the state's
   16 fp32 tiles are copied into DST every chunk for its decay, and the inverse is a chain of dependent
   steps (filled with independent work on head cores, less so on helpers).

Why these cuts: conv and norm are per-token and channel-parallel, the gates and gate vectors are tiny,
the scan's state-independent work parallelises over (head, chunk) and its sequential part over (head,
value block), so each program keeps the cores busy along its own parallel axis. The price of the
two-program scan is the chunk records' DRAM round trip (36 KB per (head, chunk) in fp32), hence the
fused form at large head counts. conv and norm are bound by SiLU on the SFPU (exp + reciprocal per
element in the timing model). Measured and not taken for the scan: a helper forming the next head's
decay tiles during this head's inverse (-0.4%, not worth its CB layout), k h interleaved with the
scaled-tile jobs (+0.7%), three record slots per head instead of two (no change). What is left is
fp32 traffic: every chunk unpacks ~8.7k cycles of operands on a head core (modeled, HiFi3) against
~7.6k of math.

Layouts: token-major tiled tensors, q/k/v [T, channels] (the conv output [T, 2HK + HV V] is consumed
in place: a head is a column offset), g/beta [T, HV] fp32, gate vectors [quantities x HV, T] fp32
(head-major, gate_vectors.h), o [T, HV V], recurrent state [HV K, V] fp32 (head hv is rows hv*K..),
conv state [3, channels] bf16 (its values are bf16 activations).

Numerics (bf16 I/O, fp32 inside): gam is an fp32 SFPU cumsum (cumsum_tile), every exp is taken of an
fp32 difference (the off-diagonal decay tiles are products of two such exps, each in [0, 1]), the state
is decayed on the SFPU in fp32 and accumulated in fp32 DST, q, k, v and K^T enter matmuls as exact
bf16. The remaining error is the TF32 operand rounding of the FPU (h, kh, Vnew, P, T and its scaled
forms) and, at the default HiFi3 (SCAN_FIDELITY), the dropped product of the operands' low slices, of
the same size: P matches fp64 to ~1e-4 (~1e-6 at HiFi4), the gate vectors to ~1e-6, T~ and T^ to ~1e-3
(rel RMS, normal inputs), and the outputs and states to rel RMS 2-3e-3 (PCC > 0.99999), about twice
the bf16 rounding of the outputs themselves, at HiFi3 as at HiFi4. The inverse: recursive doubling on
the 32x32 diagonal tiles plus block forward substitution (scan_prep_chunk.h); every intermediate is a
block of the exact inverse, so nothing grows past T.

Conditioning limits (measured; tests/test_gdn_kernels.py): in the layer's regime (unit keys from its
L2 norm, beta in (0, 1)) every input set of GDN.md passes, including nearly parallel keys + beta
within 1e-3 of 1 + g near 0 together, the worst case: cond(I + A) ~ 40 / 80 / 160 at C = 32 / 64 / 128,
T diag(beta) off by 1.6e-3 / 1.6e-3 / 1.9e-3 (rel RMS), outputs and states still at rel RMS <= 3e-3
over 4096 tokens. That worst case (nothing decays, so nothing forgets) loses accuracy linearly with
length: state rel RMS 0.0073 at 8k and 0.012 at 16k tokens at HiFi3, 0.0050 / 0.0084 at HiFi4
(C = 64, measured once each, not in CI: minutes per run); published-style inputs stay at 1.5e-3 at 16k
either way. Outside the regime (keys longer than 1, beta = 1, so beta |k|^2 > 1 and I + A nears
singularity as beta |k|^2 -> 2) the rounding is amplified: rel RMS 0.01 holds up to beta |k|^2 ~ 1.6
at C = 32, ~1.5 at C = 64 and only ~1.1 at C = 128 (HiFi3; HiFi4: ~1.7 / ~1.55 / ~1.15); at 1.96
every chunk misses it (PCC stays >= 0.999); past 2 the recurrence itself diverges. Hence chunk 64 by
default, 128 only for unit keys, and fidelity=MathFidelity.HiFi4 for keys longer than unit length.

Non-finite inputs are not filtered (the reference semantics say nothing about them) and propagate
the way the arithmetic takes them, which the tests pin down on the simulator: a NaN/inf in q at token t
makes only token t's outputs of the value heads reading that q head non-finite; in v[t, hv, j] it
poisons value column j of head hv from the start of t's chunk on (outputs and state); in k, g or beta
it poisons every later output and the state of the affected value heads from the start of t's chunk.
Other heads and earlier chunks are untouched. The card's FPU/SFPU treat non-finite values their own
way, so only "non-finite in, non-finite out where the math says so" is promised there.

Ragged sequences: the last chunk is padded with zero tiles past the tensors' end, and the scan reader
zeroes g and beta on rows past T (no decay, no write), so the finite values the conv leaves in the
padding rows of the last token tile cannot reach real outputs or the state.
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field, replace

import numpy as np

from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.program import (
    GRID_X,
    GRID_Y,
    MAX_RUNTIME_ARGS,
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    L1OverflowError,
    MathFidelity,
    Program,
    Role,
    Semaphore,
    float32_cbs,
)
from ttprefill.device.tensor import DeviceTensor

GDN_KERNELS = KERNELS_DIR / "gdn"
TILE = 32
MAX_CORES = GRID_X * GRID_Y
SUPPORTED_KEY_DIMS = (64, 128)
SUPPORTED_VALUE_DIMS = (64, 128, 256)
SUPPORTED_CHUNKS = (32, 64, 128)
CONV_WIDTH = 4
EPS = 1e-6
# Constant tiles of the scan preparation (kernels/gdn/scan_prep_consts.h: kNumConsts).
PREP_CONST_TILES = 9
# Diagonal tiles of T inverted side by side (kernels/gdn/scan_prep_chunk.h: kInverseLanes).
INVERSE_LANES = 2
# DST tiles per acquire with fp32 accumulation.
DST_TILES = 4
# Gate-vector quantities without the per-tile-boundary ones (kernels/gdn/gate_vectors.h: kFromTileEnd).
GATE_VECTOR_KINDS_BASE = 7

BF16 = DataFormat.Float16_b
FP32 = DataFormat.Float32


def _unpack_copies_to_dest(kernel: Kernel, cbs: list[CircularBuffer], indices: tuple[int, ...]) -> None:
    """Put the fp32 CBs among `indices` that sit on the compute kernel's cores in UnpackToDestFp32 mode.

    Each call names the CBs its kernel reads only by copy_tile/transpose_tile (states, partial sums,
    constants, gate vectors): in that mode they reach fp32 DST exactly; otherwise they pass through
    srcA as TF32 and lose 13 mantissa bits. A CB an FPU op reads must not be named: the mode leaves
    srcA/srcB unconfigured for it, and the simulator refuses it.
    """
    on = set(kernel.cores.cores())
    mine = [cb for cb in cbs if any(c in on for c in cb.cores.cores())]
    kernel.compute_config = replace(kernel.compute_config, unpack_to_dest_fp32=float32_cbs(mine, indices))
# Fidelity of the conv and norm programs. Every matmul there is exact at HiFi3, with the same bits as
# HiFi4, one phase (16 cycles a tile) cheaper: either in0 is a 0/1 bf16 shift matrix (no low slice, so
# phases 2 and 3 add zero) or in1 is a tile of ones (no low slice, so phases 1 and 3 add zero), and
# phases 0..2 cover the rest of both operands (slices: sim/src/numerics.cpp, after MatrixUnit.md).
# HiFi2 would drop the low slice of the fp32 sums of squares (in0 of the row-sum matmul). The gain is
# small (~0.1% modeled): the conv's shift matmuls wait on the unpacker, and SiLU bounds both programs.
CONV_NORM_FIDELITY = MathFidelity.HiFi3
# Fidelity of the scan's matmuls: HiFi3. It drops only the product of the operands' low slices (TF32
# operands: in0's last 4 mantissa bits times in1's last 5; sim/src/numerics.cpp), at most 2^-10 of a
# product and about as large as the TF32 operand rounding the FPU does at any fidelity. Measured on
# GDN.md's inputs it changes nothing visible: rel RMS 3.23e-3 / 2.56e-3 (outputs / state, 27B shape,
# 1024 tokens) against 3.22e-3 / 2.53e-3 at HiFi4; P moves from 1e-6 to 1e-4 of fp64. It costs margin
# only far outside the layer's regime, where the inverse amplifies every rounding (the conditioning
# limits of the module docstring: C = 32 keeps rel RMS 0.01 to beta |k|^2 ~ 1.6 instead of ~1.7).
# It saves a quarter of every matmul's FPU time: the 27B scan at 8k is 7.5% faster (modeled). Pass
# fidelity=MathFidelity.HiFi4 for keys longer than unit length.
SCAN_FIDELITY = MathFidelity.HiFi3


class GdnShapeError(ValueError):
    """Inputs whose shapes disagree or that the kernels do not support."""


class GdnCheckpointError(ValueError):
    """A requested checkpoint position the chunked scan cannot produce."""


# ------------------------------------------------------------------------------------------------
# Shapes and work split


@dataclass(frozen=True)
class ScanShape:
    """The sizes of one scan: T tokens, H q/k heads, HV value heads, head dims K and V, chunk C."""

    tokens: int
    qk_heads: int
    v_heads: int
    key_dim: int
    value_dim: int
    chunk: int = 64

    def __post_init__(self) -> None:
        if self.tokens < 1:
            raise GdnShapeError(f"the scan needs at least one token; got T={self.tokens}")
        if self.qk_heads < 1 or self.v_heads < 1:
            raise GdnShapeError(f"head counts must be positive; got H={self.qk_heads}, HV={self.v_heads}")
        if self.v_heads % self.qk_heads:
            raise GdnShapeError(
                f"value heads ({self.v_heads}) must be a multiple of q/k heads ({self.qk_heads}): value head j "
                f"reads q/k head j // (HV / H); pick HV = m * H"
            )
        if self.key_dim not in SUPPORTED_KEY_DIMS:
            raise GdnShapeError(f"key head dim {self.key_dim} is not supported; use one of {SUPPORTED_KEY_DIMS}")
        if self.value_dim not in SUPPORTED_VALUE_DIMS:
            raise GdnShapeError(f"value head dim {self.value_dim} is not supported; use one of {SUPPORTED_VALUE_DIMS}")
        if self.chunk not in SUPPORTED_CHUNKS:
            raise GdnShapeError(f"chunk {self.chunk} is not supported; use one of {SUPPORTED_CHUNKS}")

    @property
    def group(self) -> int:
        return self.v_heads // self.qk_heads

    @property
    def chunk_tiles(self) -> int:
        return self.chunk // TILE

    @property
    def key_tiles(self) -> int:
        return self.key_dim // TILE

    @property
    def value_tiles(self) -> int:
        return self.value_dim // TILE

    @property
    def token_tiles(self) -> int:
        return -(-self.tokens // TILE)

    @property
    def gate_row_tiles(self) -> int:
        """Tiles per row of the gate-vector tensor (kernels/gdn/gate_vectors.h: row_tiles): the token
        tiles rounded up to a count coprime to the 12 DRAM banks, so rows start on different banks."""
        n = self.token_tiles
        while n % 2 == 0 or n % 3 == 0:
            n += 1
        return n

    @property
    def num_chunks(self) -> int:
        return -(-self.tokens // self.chunk)

    @property
    def tri_tiles(self) -> int:
        nt = self.chunk_tiles
        return nt * (nt + 1) // 2

    @property
    def record_tiles(self) -> int:
        """Tiles of one chunk record: P, then T~ and -T^ interleaved (kernels/gdn/scan_prep_chunk.h)."""
        return 3 * self.tri_tiles

    @property
    def gate_kinds(self) -> int:
        """Gate-vector quantities per token tile (kernels/gdn/gate_vectors.h: kinds(nt))."""
        return GATE_VECTOR_KINDS_BASE + self.chunk_tiles - 1

    @property
    def vector_tiles(self) -> int:
        """Vector tiles of one (value head, chunk) in L1: every quantity for every token tile."""
        return self.gate_kinds * self.chunk_tiles

    @property
    def head_tiles(self) -> int:
        """Tiles of 32 value heads."""
        return -(-self.v_heads // TILE)


def core_list(count: int) -> list[CoreCoord]:
    """The first `count` cores of the grid, row by row."""
    if not 1 <= count <= MAX_CORES:
        raise ValueError(f"a program runs on 1..{MAX_CORES} cores; asked for {count}")
    return [CoreCoord(i % GRID_X, i // GRID_X) for i in range(count)]


def split_units(units: int, max_cores: int = MAX_CORES) -> list[tuple[CoreCoord, int, int]]:
    """Contiguous runs of work units per core: (core, first unit, count), as even as possible."""
    n = min(units, max_cores)
    base, extra = divmod(units, n)
    out, first = [], 0
    for i, core in enumerate(core_list(n)):
        count = base + (1 if i < extra else 0)
        out.append((core, first, count))
        first += count
    return out


# Rough per-chunk costs for choosing the sequential pass's value block (cycles; WORMHOLE.md rates):
# compute per value tile ~ 3 matmul passes over the key tiles with fp32 unpacks, and DRAM at the
# chip's 288 B/cycle shared by all cores.
_SEQ_CYCLES_PER_VALUE_TILE_AND_KEY_TILE = 3 * 2 * 128
_DRAM_BYTES_PER_CYCLE = 288.0


def default_value_block(shape: ScanShape, max_cores: int = MAX_CORES, record_format: DataFormat = FP32) -> int:
    """Value tiles per sequential unit. Narrow blocks spread a few heads over many cores; every block
    re-reads its head's record, q and k each chunk, so wide blocks save DRAM traffic. Pick the block
    whose modeled time per chunk, max(busiest core's compute, everyone's DRAM traffic), is smallest;
    ties go to the wider block."""
    s, vt, nt, kt = shape, shape.value_tiles, shape.chunk_tiles, shape.key_tiles
    best, best_cost = vt, None
    for block in sorted((b for b in range(1, vt + 1) if vt % b == 0), reverse=True):
        units = s.v_heads * (vt // block)
        compute = -(-units // max_cores) * block * nt * kt * _SEQ_CYCLES_PER_VALUE_TILE_AND_KEY_TILE
        per_unit = (s.record_tiles * record_format.tile_bytes + (2 * nt * kt + nt * block) * BF16.tile_bytes
                    + s.vector_tiles * 2 * 64)
        cost = max(compute, units * per_unit / _DRAM_BYTES_PER_CYCLE)
        if best_cost is None or cost < best_cost:
            best, best_cost = block, cost
    return best


def _cores_of(plan) -> CoreRangeSet:
    return CoreRangeSet.of([core for core, _, _ in plan])


def _fp32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def _check_tensor(name: str, t: DeviceTensor, rows: int, min_cols: int, fmt: DataFormat | None = None) -> None:
    if len(t.shape) != 2 or t.shape[0] != rows or t.shape[1] < min_cols:
        raise GdnShapeError(f"{name} tensor has shape {t.shape}; expected [{rows}, >= {min_cols}]")
    if fmt is not None and t.data_format != fmt:
        raise GdnShapeError(f"{name} tensor is {t.data_format.name}; the kernel reads {fmt.name}")


# ------------------------------------------------------------------------------------------------
# The scan: preparation and sequential programs


@dataclass
class HeadColumns:
    """Where a family of heads sits in a token-major tensor: its first column tile."""

    tensor: DeviceTensor
    first_col_tile: int = 0


def _check_qkv(s: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns) -> None:
    for name, cols, width in (("q", q, s.qk_heads * s.key_tiles), ("k", k, s.qk_heads * s.key_tiles),
                              ("v", v, s.v_heads * s.value_tiles)):
        t = cols.tensor
        if t.data_format != q.tensor.data_format:
            raise GdnShapeError(f"q, k and v must share one data format; {name} is {t.data_format.name}")
        _check_tensor(name, t, s.tokens, 1)
        if cols.first_col_tile + width > t.tiles_w:
            raise GdnShapeError(f"{name} heads need column tiles [{cols.first_col_tile}, "
                                f"{cols.first_col_tile + width}) but the tensor has {t.tiles_w}")


def _check_gate_vectors(s: ScanShape, gate_vectors: DeviceTensor) -> None:
    _check_tensor("gate-vector", gate_vectors, s.gate_kinds * s.head_tiles * TILE, s.gate_row_tiles * TILE, FP32)


def _check_outputs(s: ScanShape, out: HeadColumns, final_state: DeviceTensor, initial_state: DeviceTensor,
                   checkpoint_states: DeviceTensor, checkpoint_chunks, block_tiles: int) -> None:
    for name, t in (("initial state", initial_state), ("final state", final_state)):
        _check_tensor(name, t, s.v_heads * s.key_dim, s.value_dim, FP32)
    if len(checkpoint_chunks) and checkpoint_states.num_pages < len(checkpoint_chunks) * s.v_heads * s.key_tiles * s.value_tiles:
        raise GdnShapeError("the checkpoint tensor is too small for the requested checkpoints")
    in_range = all(0 <= c < s.num_chunks for c in checkpoint_chunks)
    if list(checkpoint_chunks) != sorted(set(checkpoint_chunks)) or not in_range:
        raise GdnCheckpointError(f"checkpoint chunk indices {checkpoint_chunks} must be ascending, distinct and in "
                                 f"[0, {s.num_chunks})")
    _check_tensor("output", out.tensor, s.tokens, 1)
    if out.first_col_tile + s.v_heads * s.value_tiles > out.tensor.tiles_w:
        raise GdnShapeError(f"the output tensor {out.tensor.shape} has no room for {s.v_heads} value heads")
    if s.value_tiles % block_tiles:
        raise GdnShapeError(f"value block of {block_tiles} tiles does not divide the {s.value_tiles} value tiles "
                            f"of a head")


def gate_vectors_program(device, shape: ScanShape, g: DeviceTensor, beta: DeviceTensor,
                         gate_vectors: DeviceTensor, *, max_cores: int = MAX_CORES) -> Program:
    """The scan's per-chunk gate vectors (kernels/gdn/gate_vectors.h) of every value head from g and
    beta ([T, HV] fp32), 32 heads per unit: cumulative decays and their exps, in fp32."""
    s = shape
    for name, t in (("g", g), ("beta", beta)):
        _check_tensor(name, t, s.tokens, s.v_heads, FP32)
    _check_gate_vectors(s, gate_vectors)
    nt = s.chunk_tiles
    plan = split_units(s.num_chunks * s.head_tiles, max_cores)
    cores = _cores_of(plan)

    def cb(index, fmt, pages):
        return CircularBuffer(index, fmt, fmt.tile_bytes, pages, cores)

    cbs = [cb(0, FP32, 2 * nt), cb(1, FP32, 2 * nt), cb(2, BF16, 2), cb(16, FP32, 2 * nt * s.gate_kinds),
           *(cb(i, FP32, nt) for i in range(24, 31))]
    reader = Kernel(GDN_KERNELS / "gate_vectors_reader.cpp", Role.RISCV_1, cores, g.accessor_args(),
                    common_runtime_args=[g.address, beta.address, s.tokens, nt, s.head_tiles])
    compute = Kernel(GDN_KERNELS / "gate_vectors_compute.cpp", Role.COMPUTE, cores,
                     common_runtime_args=[nt, s.tokens, s.head_tiles],
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=True))
    writer = Kernel(GDN_KERNELS / "gate_vectors_writer.cpp", Role.RISCV_0, cores, gate_vectors.accessor_args(),
                    common_runtime_args=[gate_vectors.address, nt, s.head_tiles, s.token_tiles, s.gate_kinds])
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count]
        compute.runtime_args[core] = [first, count]
        writer.runtime_args[core] = [first, count]
    _unpack_copies_to_dest(compute, cbs, (0, 1, 16, 24, 25, 26, 27, 28, 29, 30))
    return Program([reader, compute, writer], cbs, inputs={"g": g, "beta": beta},
                   outputs={"gate_vectors": gate_vectors},
                   name=f"gdn_gate_vectors_T{s.tokens}_hv{s.v_heads}_c{s.chunk}")


def _prep_cbs(s: ScanShape, qkv_fmt: DataFormat, cores, cb) -> list:
    """The chunk preparation's CBs (kernels/gdn/scan_prep_chunk.h), in either scan form."""
    nt, kt = s.chunk_tiles, s.key_tiles
    return [
        cb(0, qkv_fmt, 2 * nt * kt), cb(1, qkv_fmt, 2 * nt * kt),       # k, q
        cb(3, FP32, 2 * s.vector_tiles),                                 # gate vectors
        cb(5, BF16, PREP_CONST_TILES),                                   # constants
        cb(7, FP32, 2 * INVERSE_LANES), cb(9, FP32, INVERSE_LANES),       # inverse scratch
        cb(27, FP32, s.tri_tiles), cb(28, FP32, s.tri_tiles), cb(29, FP32, s.tri_tiles),          # decay, A, T
    ]


def _reader_args(s: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns, gate_vectors: DeviceTensor) -> list:
    """Common runtime args 0..15 of scan_prep_reader.cpp."""
    return [q.tensor.address, k.tensor.address, v.tensor.address, gate_vectors.address, s.head_tiles, s.tokens,
            s.num_chunks, s.chunk_tiles, s.key_tiles, s.value_tiles, s.group, q.tensor.tiles_w, q.first_col_tile,
            k.first_col_tile, v.tensor.tiles_w, v.first_col_tile]


def scan_prep_program(device, shape: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns,
                      gate_vectors: DeviceTensor, records: DeviceTensor, *,
                      fidelity: MathFidelity = SCAN_FIDELITY, max_cores: int = MAX_CORES) -> Program:
    """The per-(value head, chunk) preparation: chunk records P, T~, -T^ (see module docstring)."""
    s = shape
    _check_qkv(s, q, k, v)
    _check_gate_vectors(s, gate_vectors)
    units = s.v_heads * s.num_chunks
    if records.num_pages < units * s.record_tiles:
        raise GdnShapeError("the chunk-record tensor is too small for this shape (use allocate_scan_scratch)")
    plan = split_units(units, max_cores)
    cores = _cores_of(plan)
    rec_fmt = records.data_format

    def cb(index, fmt, pages):
        return CircularBuffer(index, fmt, fmt.tile_bytes, pages, cores)

    cbs = _prep_cbs(s, q.tensor.data_format, cores, cb) + [cb(16, rec_fmt, 8)]
    reader = Kernel(GDN_KERNELS / "scan_prep_reader.cpp", Role.RISCV_1, cores,
                    q.tensor.accessor_args() + gate_vectors.accessor_args(),
                    common_runtime_args=_reader_args(s, q, k, v, gate_vectors))
    compute = Kernel(GDN_KERNELS / "scan_prep_compute.cpp", Role.COMPUTE, cores,
                     common_runtime_args=[s.chunk_tiles, s.key_tiles],
                     compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True))
    writer = Kernel(GDN_KERNELS / "scan_prep_writer.cpp", Role.RISCV_0, cores, records.accessor_args(),
                    common_runtime_args=[records.address, s.record_tiles])
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [first, count]
    _unpack_copies_to_dest(compute, cbs, (3, 16, 27))
    program = Program([reader, compute, writer], cbs,
                      inputs={"q": q.tensor, "k": k.tensor, "gate_vectors": gate_vectors},
                      outputs={"records": records},
                      name=f"gdn_scan_prep_T{s.tokens}_h{s.qk_heads}x{s.v_heads}_k{s.key_dim}v{s.value_dim}_c{s.chunk}")
    _validate_l1(program, f"chunk {s.chunk}", "lower the chunk to 64 or 32")
    return program


def _writer(s: ScanShape, cores, out: HeadColumns, final_state: DeviceTensor, checkpoint_states: DeviceTensor,
            ck: list[int], block: int) -> Kernel:
    return Kernel(GDN_KERNELS / "scan_seq_writer.cpp", Role.RISCV_0, cores,
                  out.tensor.accessor_args() + final_state.accessor_args(),
                  common_runtime_args=[out.tensor.address, final_state.address, checkpoint_states.address,
                                       s.num_chunks, s.chunk_tiles, s.key_tiles, s.value_tiles, block, s.v_heads,
                                       out.tensor.tiles_h, out.tensor.tiles_w, out.first_col_tile, len(ck), *ck])


def scan_seq_program(device, shape: ScanShape, records: DeviceTensor, gate_vectors: DeviceTensor, q: HeadColumns,
                     k: HeadColumns, v: HeadColumns, initial_state: DeviceTensor, out: HeadColumns,
                     final_state: DeviceTensor, checkpoint_states: DeviceTensor, checkpoint_chunks: list[int], *,
                     block_tiles: int | None = None, fidelity: MathFidelity = SCAN_FIDELITY,
                     max_cores: int = MAX_CORES) -> Program:
    """The sequential pass over chunks per (value head, value block): outputs, checkpoints, final state."""
    s = shape
    nt, kt = s.chunk_tiles, s.key_tiles
    block = block_tiles or default_value_block(s, max_cores, records.data_format)
    _check_qkv(s, q, k, v)
    _check_gate_vectors(s, gate_vectors)
    _check_outputs(s, out, final_state, initial_state, checkpoint_states, checkpoint_chunks, block)
    units = s.v_heads * (s.value_tiles // block)
    plan = split_units(units, max_cores)
    cores = _cores_of(plan)
    rec_fmt, qkv_fmt = records.data_format, q.tensor.data_format

    def cb(index, fmt, pages):
        return CircularBuffer(index, fmt, fmt.tile_bytes, pages, cores)

    cbs = [
        cb(0, rec_fmt, 4 * s.tri_tiles), cb(2, qkv_fmt, 2 * nt * kt), cb(3, rec_fmt, 2 * s.tri_tiles),  # T pairs, q, P
        cb(4, qkv_fmt, 2 * nt * kt), cb(5, FP32, 2 * s.vector_tiles), cb(6, FP32, kt * block),  # k, vectors, state in
        cb(7, qkv_fmt, 2 * nt * block),                                                      # v block
        cb(16, out.tensor.data_format, 2 * nt * block), cb(17, FP32, DST_TILES),             # O, state out
        cb(24, FP32, 2 * kt * block), cb(25, FP32, nt * block), cb(26, FP32, nt * block),    # h, Vnew, kh
        cb(27, FP32, kt * nt), cb(28, FP32, kt * nt),                                        # K~^T, q~
    ]
    ck = [int(c) for c in checkpoint_chunks]
    reader = Kernel(GDN_KERNELS / "scan_seq_reader.cpp", Role.RISCV_1, cores,
                    records.accessor_args() + initial_state.accessor_args() + q.tensor.accessor_args()
                    + gate_vectors.accessor_args(),
                    common_runtime_args=[records.address, gate_vectors.address, initial_state.address,
                                         q.tensor.address, k.tensor.address, v.tensor.address, s.num_chunks, nt, kt,
                                         s.value_tiles, block, s.record_tiles, s.tokens, q.tensor.tiles_w,
                                         q.first_col_tile, k.first_col_tile, s.group, v.tensor.tiles_w,
                                         v.first_col_tile, s.head_tiles])
    compute = Kernel(GDN_KERNELS / "scan_seq_compute.cpp", Role.COMPUTE, cores,
                     common_runtime_args=[nt, kt, block, s.num_chunks, len(ck), *ck],
                     compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True))
    writer = _writer(s, cores, out, final_state, checkpoint_states, ck, block)
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [first, count]
    _unpack_copies_to_dest(compute, cbs, (5, 6, 17))
    program = Program([reader, compute, writer], cbs,
                      inputs={"records": records, "gate_vectors": gate_vectors, "q": q.tensor, "k": k.tensor,
                              "v": v.tensor, "initial_state": initial_state},
                      outputs={"out": out.tensor, "final_state": final_state, "checkpoints": checkpoint_states},
                      name=f"gdn_scan_seq_T{s.tokens}_h{s.qk_heads}x{s.v_heads}_k{s.key_dim}v{s.value_dim}_c{s.chunk}")
    _validate_l1(program, f"chunk {s.chunk}", "lower the chunk to 64 or 32, or the value block")
    return program


# Helper cores of the fused scan (kernels/gdn/scan_offload.h): at most this many value heads per helper,
# and the modeled cycles of one (head, chunk) of the 27B shape (K = V = 128, C = 64) the offloaded
# fraction is balanced on: a helper's preparation of a record (decay, A, the inverse with its waits
# unfilled, P, the scaled T; k k^T and q k^T formed once per q/k group) and a head core's own part of a
# chunk (k h, K~^T, q~, Vnew, O, the state update), from RunReport.zones of the fused scan in timing-only
# runs (HiFi3, timing model 2.0 at its central setting: elapsed per zone entry, prep.* ~22.0k and seq.*
# ~17.5k a chunk at 8k tokens). The fraction they give, 29/64, is the fastest of a sweep at 8k tokens:
# 3.724M cycles (26/64: 3.829M, 28/64: 3.755M, 30/64: 3.735M, 32/64: 3.966M, 39/64: 4.803M).
MAX_HEADS_PER_HELPER = 3
RECORD_SLOTS = 2
_PREP_CYCLES_PER_CHUNK = 22_000
_SEQ_CYCLES_PER_CHUNK = 17_500
_OFFLOAD_DENOMINATOR = 64


@dataclass(frozen=True)
class HelperPlan:
    """Which cores help which value heads, and the share of each head's chunks they prepare: chunk c is
    offloaded when (c + 1) num // den > c num // den (num of every den chunks, spread evenly)."""

    heads_per_helper: int
    helpers: int
    offload_num: int
    offload_den: int = _OFFLOAD_DENOMINATOR

    def helper_of(self, head: int) -> tuple[int, int]:
        """(helper index, the head's index among that helper's heads)."""
        return divmod(head, self.heads_per_helper)


def helper_plan(v_heads: int, max_cores: int = MAX_CORES) -> HelperPlan | None:
    """Helpers for the fused scan's idle cores, or None when too few cores are left. Each helper takes
    g <= MAX_HEADS_PER_HELPER heads and a fraction f of their chunks, chosen so that a head core
    (the rest of every chunk plus the preparation of 1 - f of them) and a helper (g f preparations)
    take the same time per chunk: f = (seq + prep) / (prep (1 + g))."""
    idle = max_cores - v_heads
    if idle < 1:
        return None
    g = max(1, -(-v_heads // idle))
    if g > MAX_HEADS_PER_HELPER:
        return None
    f = (_SEQ_CYCLES_PER_CHUNK + _PREP_CYCLES_PER_CHUNK) / (_PREP_CYCLES_PER_CHUNK * (1 + g))
    num = min(_OFFLOAD_DENOMINATOR, round(f * _OFFLOAD_DENOMINATOR))
    return HelperPlan(g, -(-v_heads // g), num)


def offloaded_chunks(num_chunks: int, plan: HelperPlan) -> list[int]:
    """The chunks a helper prepares (kernels/gdn/scan_offload.h: offloaded)."""
    return [c for c in range(num_chunks)
            if (c + 1) * plan.offload_num // plan.offload_den > c * plan.offload_num // plan.offload_den]


def scan_fused_program(device, shape: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns,
                       gate_vectors: DeviceTensor, initial_state: DeviceTensor, out: HeadColumns,
                       final_state: DeviceTensor, checkpoint_states: DeviceTensor, checkpoint_chunks: list[int], *,
                       fidelity: MathFidelity = SCAN_FIDELITY, max_cores: int = MAX_CORES,
                       helpers: bool | None = None) -> Program:
    """The whole scan in one program, one value head per core: each chunk's preparation (P, T~, -T^)
    is formed in L1 right before the sequential step that consumes it, so the chunk records never make
    the DRAM round trip of the two-program form. The kernels are the two programs' own
    (scan_prep_reader.cpp and scan_seq_compute.cpp built with GDN_SCAN_FUSED, scan_seq_writer.cpp
    with the block equal to the head). With helpers (the default when the grid has idle cores for
    them: helper_plan), the idle cores prepare a share of every head's chunks and send the records to
    the heads' cores (kernels/gdn/scan_offload.h)."""
    s = shape
    nt, kt, vt = s.chunk_tiles, s.key_tiles, s.value_tiles
    hplan = helper_plan(s.v_heads, max_cores) if helpers in (None, True) else None
    if helpers and hplan is None:
        raise GdnShapeError(f"{s.v_heads} value heads leave no room for helper cores on {max_cores} cores "
                            f"(a helper takes at most {MAX_HEADS_PER_HELPER} heads); pass helpers=False")
    _check_qkv(s, q, k, v)
    _check_gate_vectors(s, gate_vectors)
    _check_outputs(s, out, final_state, initial_state, checkpoint_states, checkpoint_chunks, vt)
    plan = split_units(s.v_heads, max_cores)
    head_cores = [core for core, _, _ in plan]
    cores = _cores_of(plan)
    qkv_fmt, out_fmt = q.tensor.data_format, out.tensor.data_format

    def cb(index, fmt, pages, on=cores):
        return CircularBuffer(index, fmt, fmt.tile_bytes, pages, on)

    cbs = _prep_cbs(s, qkv_fmt, cores, cb) + [
        cb(2, qkv_fmt, 2 * nt * vt),                                           # v
        # The chunk's preparation in L1 (fp32: it costs no DRAM here) and the sequential part's CBs.
        cb(11, FP32, s.tri_tiles), cb(12, FP32, s.tri_tiles), cb(13, FP32, s.tri_tiles),  # P, T~, -T^
        cb(15, FP32, kt * vt),                                                 # initial state
        cb(16, out_fmt, 2 * nt * vt), cb(17, FP32, DST_TILES),                 # O (two chunks), state out
        cb(18, FP32, 2 * kt * vt), cb(19, FP32, nt * vt), cb(20, FP32, nt * vt),  # h, Vnew, kh
        cb(21, FP32, kt * nt), cb(23, FP32, kt * nt),                          # K~^T, q~
        cb(22, FP32, RECORD_SLOTS * s.record_tiles),                           # records from a helper
    ]
    offload = [hplan.offload_num, hplan.offload_den] if hplan else [0, 1]
    fused = {"GDN_SCAN_FUSED": "1"}
    ck = [int(c) for c in checkpoint_chunks]
    reader = Kernel(GDN_KERNELS / "scan_prep_reader.cpp", Role.RISCV_1, cores,
                    q.tensor.accessor_args() + gate_vectors.accessor_args() + initial_state.accessor_args(),
                    defines=fused, common_runtime_args=_reader_args(s, q, k, v, gate_vectors)
                    + [initial_state.address, *offload, s.record_tiles])
    compute = Kernel(GDN_KERNELS / "scan_seq_compute.cpp", Role.COMPUTE, cores, defines=fused,
                     common_runtime_args=[nt, kt, vt, s.num_chunks, len(ck), *ck, *offload],
                     compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True))
    writer = _writer(s, cores, out, final_state, checkpoint_states, ck, vt)
    kernels = [reader, compute, writer]
    semaphores = [Semaphore(0, cores, 0), Semaphore(1, cores, 0)]  # scan_offload.h: ready, message
    helper_cores = core_list(len(head_cores) + hplan.helpers)[len(head_cores):] if hplan else []
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count, 0, 0, 0]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [first, count]
    if hplan:
        hcores = CoreRangeSet.of(helper_cores)
        cbs += _prep_cbs(s, qkv_fmt, hcores, lambda i, f, n: cb(i, f, n, hcores)) + [cb(16, FP32, 8, hcores)]
        semaphores += [Semaphore(i, hcores, 0) for i in range(MAX_HEADS_PER_HELPER * (1 + RECORD_SLOTS))]
        # When every helper's heads are one q/k group (the 27B shape: 3 heads per helper, groups of 3),
        # a helper reads k and q once per chunk and forms k k^T and q k^T once for its heads.
        head_sets = [range(j * hplan.heads_per_helper, min(s.v_heads, (j + 1) * hplan.heads_per_helper))
                     for j in range(hplan.helpers)]
        shared = all(len(hs) == hplan.heads_per_helper and len({h // s.group for h in hs}) == 1 for hs in head_sets)
        h_defines = {"GDN_SCAN_HELPER": "1", **({"GDN_HELPER_SHARED_QK": "1"} if shared else {})}
        if shared:
            cbs += [cb(12, FP32, s.tri_tiles, hcores), cb(13, FP32, s.tri_tiles, hcores)]  # k k^T, q k^T
        h_reader = Kernel(GDN_KERNELS / "scan_prep_reader.cpp", Role.RISCV_1, hcores,
                          q.tensor.accessor_args() + gate_vectors.accessor_args(), defines=h_defines,
                          common_runtime_args=_reader_args(s, q, k, v, gate_vectors) + [0, *offload])
        h_compute = Kernel(GDN_KERNELS / "scan_prep_compute.cpp", Role.COMPUTE, hcores, defines=h_defines,
                           common_runtime_args=[nt, kt, hplan.heads_per_helper],
                           compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True))
        h_sender = Kernel(GDN_KERNELS / "scan_prep_sender.cpp", Role.RISCV_0, hcores,
                          common_runtime_args=[s.num_chunks, s.record_tiles, *offload])
        n_off = len(offloaded_chunks(s.num_chunks, hplan))
        for j, hcore in enumerate(helper_cores):
            heads = list(range(j * hplan.heads_per_helper, min(s.v_heads, (j + 1) * hplan.heads_per_helper)))
            h_reader.runtime_args[hcore] = [heads[0], len(heads)]
            h_compute.runtime_args[hcore] = [n_off * len(heads)]
            h_sender.runtime_args[hcore] = [len(heads)] + [x for h in heads
                                                            for x in device.worker_noc_coord(head_cores[h])]
            hx, hy = device.worker_noc_coord(hcore)
            for local, h in enumerate(heads):
                reader.runtime_args[head_cores[h]][2:] = [hx, hy, local]
        kernels += [h_reader, h_compute, h_sender]
        _unpack_copies_to_dest(h_compute, cbs, (3, 12, 13, 16, 27))
    _unpack_copies_to_dest(compute, cbs, (3, 15, 17, 27))
    program = Program(kernels, cbs, semaphores,
                      inputs={"q": q.tensor, "k": k.tensor, "v": v.tensor, "gate_vectors": gate_vectors,
                              "initial_state": initial_state},
                      outputs={"out": out.tensor, "final_state": final_state, "checkpoints": checkpoint_states},
                      name=f"gdn_scan_fused_T{s.tokens}_h{s.qk_heads}x{s.v_heads}_k{s.key_dim}v{s.value_dim}_c{s.chunk}")
    _validate_l1(program, f"chunk {s.chunk}", "lower the chunk to 64 or 32, or use the two-program scan (fused=False)")
    return program


def _validate_l1(program: Program, what: str, fix: str) -> None:
    try:
        program.validate()
    except L1OverflowError as e:
        raise L1OverflowError(f"{what} does not fit L1: {e}; {fix}") from None


def fused_scan_by_default(shape: ScanShape, max_cores: int = MAX_CORES) -> bool:
    """Whether the scan runs as one fused program (scan_fused_program) unless told otherwise. The fused
    form saves the chunk records' DRAM round trip but runs one value head per core (plus its helpers),
    so it is chosen when the value heads fill at least a quarter of the cores; with fewer heads the two
    programs spread the preparation over (head, chunk) and the sequential part over value blocks.
    Measured (modeled, 4k tokens, gate vectors + scan): 24 heads V=128 fused 0.95M cycles vs 1.51M;
    16 heads V=256 1.68M vs 1.72M; 12 heads V=128 0.94M vs 0.80M; 8 heads V=256 1.67M vs 0.89M."""
    return 4 * shape.v_heads >= max_cores


def scan_programs(device, shape: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns, g: DeviceTensor,
                  beta: DeviceTensor, scratch: "ScanScratch", initial_state: DeviceTensor, out: HeadColumns,
                  final_state: DeviceTensor, checkpoint_states: DeviceTensor, checkpoint_chunks: list[int], *,
                  fused: bool | None = None, block_tiles: int | None = None,
                  fidelity: MathFidelity = SCAN_FIDELITY, max_cores: int = MAX_CORES,
                  helpers: bool | None = None) -> list[Program]:
    """The scan's programs: the gate vectors, then the fused scan or preparation + sequential pass.
    fused=None picks by fused_scan_by_default (and falls back to two programs when the fused one does
    not fit L1); an explicit value block (block_tiles) means the two-program form."""
    if fused and block_tiles is not None:
        raise GdnShapeError("the fused scan works on whole value heads; drop block_tiles or pass fused=False")
    gates = gate_vectors_program(device, shape, g, beta, scratch.gate_vectors, max_cores=max_cores)

    def fused_program():
        return scan_fused_program(device, shape, q, k, v, scratch.gate_vectors, initial_state, out, final_state,
                                  checkpoint_states, checkpoint_chunks, fidelity=fidelity, max_cores=max_cores,
                                  helpers=helpers)

    if fused is None:
        fused = block_tiles is None and fused_scan_by_default(shape, max_cores)
        if fused:
            try:
                return [gates, fused_program()]
            except L1OverflowError:
                fused = False
    if fused:
        return [gates, fused_program()]
    return [gates,
            scan_prep_program(device, shape, q, k, v, scratch.gate_vectors, scratch.records, fidelity=fidelity,
                              max_cores=max_cores),
            scan_seq_program(device, shape, scratch.records, scratch.gate_vectors, q, k, v, initial_state, out,
                             final_state, checkpoint_states, checkpoint_chunks, block_tiles=block_tiles,
                             fidelity=fidelity, max_cores=max_cores)]


@dataclass
class ScanScratch:
    """DRAM the scan needs between its programs: the gate vectors and the chunk records."""

    gate_vectors: DeviceTensor
    records: DeviceTensor

    def free(self, device) -> None:
        device.free(self.gate_vectors)
        device.free(self.records)


def allocate_scan_scratch(device, shape: ScanShape, record_format: DataFormat = FP32) -> ScanScratch:
    units = shape.v_heads * shape.num_chunks
    gate_vectors = device.allocate((shape.gate_kinds * shape.head_tiles * TILE, shape.gate_row_tiles * TILE), FP32)
    records = device.allocate((units * shape.record_tiles * TILE, TILE), record_format)
    return ScanScratch(gate_vectors, records)


# The sequential pass's writer carries the checkpoint list in its runtime args (13 fixed common args and
# 2 per core besides), and tt-metal allows MAX_RUNTIME_ARGS in all.
MAX_CHECKPOINTS_PER_CALL = MAX_RUNTIME_ARGS - 13 - 2


def checkpoint_chunk_indices(positions, tokens: int, chunk: int) -> tuple[list[int], list[int]]:
    """Split requested checkpoint positions into (device chunk indices, positions served on the host).

    A position p must be 0 (the initial state), T (the final state) or a multiple of the chunk below T;
    the device writes the state after chunk p // chunk - 1 for the latter."""
    device, host = [], []
    for p in sorted(set(int(p) for p in positions)):
        if p < 0 or p > tokens:
            raise GdnCheckpointError(f"checkpoint position {p} is outside [0, T={tokens}]")
        if p in (0, tokens):
            host.append(p)
        elif p % chunk:
            raise GdnCheckpointError(
                f"checkpoint position {p} is not chunk-aligned: use a multiple of chunk={chunk} (or 0 or T={tokens}), "
                f"or run the scan with a chunk that divides {p}"
            )
        else:
            device.append(p // chunk - 1)
    if len(device) > MAX_CHECKPOINTS_PER_CALL:
        raise GdnCheckpointError(
            f"{len(device)} checkpoints in one call; the device takes at most {MAX_CHECKPOINTS_PER_CALL} per call: "
            f"split the sequence into several calls carrying the state"
        )
    return device, host


# ------------------------------------------------------------------------------------------------
# Plain functions: numpy in, numpy out


def _as_array(name: str, x, ndim: int) -> np.ndarray:
    a = np.asarray(x, dtype=np.float32)
    if a.ndim != ndim:
        raise GdnShapeError(f"{name} must have {ndim} dims; got shape {a.shape}")
    return a


def scan_shape_of(q, k, v, g, beta, initial_state, chunk: int) -> ScanShape:
    """Check the scan's input shapes against each other; the ScanShape they describe."""
    if q.shape != k.shape:
        raise GdnShapeError(f"q and k must both be [T, H, K]; got q {q.shape}, k {k.shape}")
    T, H, K = q.shape
    if v.shape[0] != T:
        raise GdnShapeError(f"v must be [T, HV, V] with T={T}; got {v.shape}")
    HV, V = v.shape[1], v.shape[2]
    shape = ScanShape(T, H, HV, K, V, chunk)
    for name, arr in (("g", g), ("beta", beta)):
        if arr.shape != (T, HV):
            raise GdnShapeError(f"{name} must be [T, HV] = {(T, HV)}; got {arr.shape}")
    if initial_state is not None and initial_state.shape != (HV, K, V):
        raise GdnShapeError(f"initial_state must be [HV, K, V] = {(HV, K, V)}; got {initial_state.shape}")
    return shape


def gdn_scan(device, q, k, v, g, beta, initial_state=None, chunk: int = 64, checkpoints=(), *,
             block_tiles: int | None = None, record_format: DataFormat = FP32, fused: bool | None = None,
             fidelity: MathFidelity = SCAN_FIDELITY, max_cores: int = MAX_CORES, reports: list | None = None,
             helpers: bool | None = None):
    """The chunked GDN scan on the device.

    q, k [T, H, K] (q already scaled by K^-1/2), v [T, HV, V], g, beta [T, HV], initial_state
    [HV, K, V] or None (zeros). q/k/v go to the device as bf16, g/beta/state as fp32.
    checkpoints: positions p (0, T, or multiples of chunk) whose state to return.
    fused: one fused program (True), preparation + sequential pass (False), or chosen by scan_programs.
    helpers: whether the fused scan's idle cores prepare a share of the chunks (None: when they fit).
    Returns (o [T, HV, V], final_state [HV, K, V], {p: state [HV, K, V]}), float32.
    """
    q, k, v = (_as_array(n, x, 3) for n, x in (("q", q), ("k", k), ("v", v)))
    g, beta = _as_array("g", g, 2), _as_array("beta", beta, 2)
    if initial_state is not None:
        initial_state = _as_array("initial_state", initial_state, 3)
    s = scan_shape_of(q, k, v, g, beta, initial_state, chunk)
    ck_device, ck_host = checkpoint_chunk_indices(checkpoints, s.tokens, s.chunk)
    if fused and block_tiles is not None:
        raise GdnShapeError("the fused scan works on whole value heads; drop block_tiles or pass fused=False")
    T, HV, K, V = s.tokens, s.v_heads, s.key_dim, s.value_dim
    state0 = np.zeros((HV, K, V), np.float32) if initial_state is None else initial_state

    owned: list[DeviceTensor] = []

    def up(a, fmt):
        owned.append(device.upload(np.ascontiguousarray(a), fmt))
        return owned[-1]

    def alloc(shape_, fmt):
        owned.append(device.allocate(shape_, fmt))
        return owned[-1]

    try:
        tq, tk = up(q.reshape(T, -1), BF16), up(k.reshape(T, -1), BF16)
        tv = up(v.reshape(T, -1), BF16)
        tg, tb = up(g, FP32), up(beta, FP32)
        tstate = up(state0.reshape(HV * K, V), FP32)
        scratch = allocate_scan_scratch(device, s, record_format)
        owned += [scratch.gate_vectors, scratch.records]
        tout = alloc((T, HV * V), BF16)
        tfinal = alloc((HV * K, V), FP32)
        tck = alloc((max(1, len(ck_device)) * HV * K, V), FP32)
        programs = scan_programs(device, s, HeadColumns(tq), HeadColumns(tk), HeadColumns(tv), tg, tb, scratch,
                                 tstate, HeadColumns(tout), tfinal, tck, ck_device, fused=fused,
                                 block_tiles=block_tiles, fidelity=fidelity, max_cores=max_cores, helpers=helpers)
        for program in programs:
            report = device.run(program)
            if reports is not None:
                reports.append(report)
        o = device.download(tout).reshape(T, HV, V)
        final = device.download(tfinal).reshape(HV, K, V)
        states = {}
        if ck_device:
            all_ck = device.download(tck).reshape(-1, HV, K, V)
            for i, c in enumerate(ck_device):
                states[(c + 1) * s.chunk] = all_ck[i]
        for p in ck_host:
            states[p] = state0.copy() if p == 0 else final.copy()
        return o, final, states
    finally:
        for t in owned:
            device.free(t)



def unpack_records(records: np.ndarray, shape: ScanShape) -> dict[str, np.ndarray]:
    """Chunk records as downloaded ([units * record_tiles * 32, 32]) -> arrays per (value head, chunk):
    P, T_beta = T diag(beta) and T_beta_exp = T diag(beta exp(gam)) (sign restored), each [C, C] with
    zeros above the diagonal tiles."""
    nt = shape.chunk_tiles
    units = shape.v_heads * shape.num_chunks
    tiles = records.reshape(units, shape.record_tiles, TILE, TILE)
    ntri = shape.tri_tiles
    out = {name: np.zeros((units, shape.chunk, shape.chunk), np.float32) for name in ("P", "T_beta", "T_beta_exp")}
    for i in range(nt):
        for j in range(i + 1):
            t = i * (i + 1) // 2 + j
            rows, cols = slice(i * TILE, (i + 1) * TILE), slice(j * TILE, (j + 1) * TILE)
            out["P"][:, rows, cols] = tiles[:, t]
            out["T_beta"][:, rows, cols] = tiles[:, ntri + 2 * t]
            out["T_beta_exp"][:, rows, cols] = -tiles[:, ntri + 2 * t + 1]
    lead = (shape.v_heads, shape.num_chunks)
    return {name: a.reshape(lead + a.shape[1:]) for name, a in out.items()}


def unpack_gate_vectors(gate_vectors: np.ndarray, shape: ScanShape) -> dict[str, np.ndarray]:
    """The gate-vector tensor as downloaded -> {quantity: [HV, T]} (kernels/gdn/gate_vectors.h names,
    from_tile_end_J for the per-boundary ones)."""
    names = ["beta", "gam", "exp_gam", "beta_exp_gam", "to_last", "last", "to_tile_end"]
    names += [f"from_tile_end_{j}" for j in range(shape.chunk_tiles - 1)]
    rows = shape.head_tiles * TILE
    return {name: gate_vectors[q * rows:q * rows + shape.v_heads, :shape.tokens] for q, name in enumerate(names)}


def gdn_gate_vectors(device, g, beta, chunk: int = 64, *, reports: list | None = None) -> dict[str, np.ndarray]:
    """The gate-vector program on its own: g, beta [T, HV] -> unpack_gate_vectors' dict."""
    g, beta = _as_array("g", g, 2), _as_array("beta", beta, 2)
    if g.shape != beta.shape:
        raise GdnShapeError(f"g and beta must both be [T, HV]; got {g.shape} and {beta.shape}")
    T, hv = g.shape
    s = ScanShape(T, 1, hv, SUPPORTED_KEY_DIMS[0], SUPPORTED_VALUE_DIMS[0], chunk)
    own = _Owned(device)
    try:
        tg, tb = own.upload(g, FP32), own.upload(beta, FP32)
        tv = own.allocate((s.gate_kinds * s.head_tiles * TILE, s.gate_row_tiles * TILE), FP32)
        _run(device, gate_vectors_program(device, s, tg, tb, tv), reports)
        return unpack_gate_vectors(device.download(tv), s)
    finally:
        own.free()


def gdn_chunk_prepare(device, q, k, v, g, beta, chunk: int = 64, *, fidelity: MathFidelity = SCAN_FIDELITY):
    """The scan's preparation program on its own (after the gate vectors): the chunk records of every
    (value head, chunk), as unpack_records returns them (to check against
    ttprefill.reference.gdn.chunk_prepare)."""
    q, k, v = (_as_array(n, x, 3) for n, x in (("q", q), ("k", k), ("v", v)))
    g, beta = _as_array("g", g, 2), _as_array("beta", beta, 2)
    s = scan_shape_of(q, k, v, g, beta, None, chunk)
    own = _Owned(device)
    try:
        T = s.tokens
        tq, tk, tv = (own.upload(x.reshape(T, -1), BF16) for x in (q, k, v))
        tg, tb = own.upload(g, FP32), own.upload(beta, FP32)
        scratch = allocate_scan_scratch(device, s)
        own.tensors += [scratch.gate_vectors, scratch.records]
        device.run(gate_vectors_program(device, s, tg, tb, scratch.gate_vectors))
        device.run(scan_prep_program(device, s, HeadColumns(tq), HeadColumns(tk), HeadColumns(tv),
                                     scratch.gate_vectors, scratch.records, fidelity=fidelity))
        return unpack_records(device.download(scratch.records), s)
    finally:
        own.free()


# ------------------------------------------------------------------------------------------------
# Conv1d + SiLU (+ L2 norm of q and k), gates, gated RMSNorm

# Norm modes of a conv unit (kernels/gdn/conv_consts.h).
CONV_NORM_NONE, CONV_NORM_L2, CONV_NORM_L2_SCALED = 0, 1, 2
CONV_CONST_TILES = 7  # conv_consts.h: kConvNumConsts
SOFTPLUS_THRESHOLD = 20.0  # softplus(x) = x above it (as torch's default)


@dataclass(frozen=True)
class LayerDims:
    """Head layout of one GDN layer's channels: qkv = [q heads | k heads | v heads]."""

    qk_heads: int
    v_heads: int
    key_dim: int
    value_dim: int

    def __post_init__(self) -> None:
        ScanShape(1, self.qk_heads, self.v_heads, self.key_dim, self.value_dim)  # same checks as the scan

    @property
    def conv_channels(self) -> int:
        return 2 * self.qk_heads * self.key_dim + self.v_heads * self.value_dim

    @property
    def key_tiles(self) -> int:
        return self.key_dim // TILE

    @property
    def value_tiles(self) -> int:
        return self.value_dim // TILE


def conv_value_width(dims: LayerDims, max_cores: int = MAX_CORES) -> int:
    """Value channel tiles per conv unit: single tiles spread few heads over the cores; with many
    heads a whole head per unit keeps the per-core unit lists (runtime args) short."""
    single = 2 * dims.qk_heads + dims.v_heads * dims.value_tiles
    return 1 if single <= 4 * max_cores else dims.value_tiles


def conv_units(dims: LayerDims, tokens: int, max_cores: int = MAX_CORES) -> list[tuple[int, int, int, int, int]]:
    """Conv work units (first channel tile, width, first token tile, end token tile, norm mode): every q
    and k head as one group of key tiles (normalised together), value tiles alone or by head
    (conv_value_width), each split into token ranges so that there are about two units per core."""
    kt, h, vw = dims.key_tiles, dims.qk_heads, conv_value_width(dims, max_cores)
    groups = [(i * kt, kt, CONV_NORM_L2_SCALED) for i in range(h)]
    groups += [((h + i) * kt, kt, CONV_NORM_L2) for i in range(h)]
    groups += [(2 * h * kt + j * vw, vw, CONV_NORM_NONE) for j in range(dims.v_heads * dims.value_tiles // vw)]
    token_tiles = -(-tokens // TILE)
    ranges = max(1, min(token_tiles, -(-2 * max_cores // len(groups))))
    bounds = [token_tiles * r // ranges for r in range(ranges + 1)]
    return [(col0, width, bounds[r], bounds[r + 1], mode) for col0, width, mode in groups
            for r in range(ranges) if bounds[r + 1] > bounds[r]]


def balance_units(costs: list[int], max_cores: int = MAX_CORES) -> list[list[int]]:
    """Unit indices per core: largest first onto the least loaded core (deterministic)."""
    n = min(len(costs), max_cores)
    loads = [0] * n
    owned: list[list[int]] = [[] for _ in range(n)]
    for i in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        c = min(range(n), key=lambda c: (loads[c], c))
        owned[c].append(i)
        loads[c] += costs[i]
    return [sorted(o) for o in owned]


def conv_program(device, dims: LayerDims, tokens: int, x: DeviceTensor, conv_state: DeviceTensor,
                 tap_weights: DeviceTensor, out: DeviceTensor, conv_state_out: DeviceTensor, *,
                 max_cores: int = MAX_CORES) -> Program:
    """Causal conv1d + SiLU over [T, 2HK + HV V], L2-normalising q and k heads and scaling q by K^-1/2."""
    c = dims.conv_channels
    _check_tensor("qkv", x, tokens, c, BF16)
    _check_tensor("conv output", out, tokens, c, BF16)
    for name, t in (("conv state", conv_state), ("new conv state", conv_state_out)):
        _check_tensor(name, t, CONV_WIDTH - 1, c, BF16)
    _check_tensor("conv tap weights", tap_weights, CONV_WIDTH * TILE, c, FP32)
    units = conv_units(dims, tokens, max_cores)
    owned = balance_units([u[1] * (u[3] - u[2]) for u in units], max_cores)
    cores = core_list(len(owned))
    core_set = CoreRangeSet.of(cores)
    width = max(dims.key_tiles, conv_value_width(dims, max_cores))
    cbs = [
        CircularBuffer(0, BF16, BF16.tile_bytes, 2 * width, core_set),                 # cur
        CircularBuffer(1, BF16, BF16.tile_bytes, 2 * width, core_set),                 # prev
        CircularBuffer(2, FP32, FP32.tile_bytes, 2 * CONV_WIDTH * width, core_set),    # tap weights
        CircularBuffer(3, BF16, BF16.tile_bytes, CONV_CONST_TILES, core_set),          # constants
        CircularBuffer(4, BF16, BF16.tile_bytes, 1, core_set),                         # state scratch
        CircularBuffer(5, BF16, BF16.tile_bytes, width, core_set),                     # carried tiles
        CircularBuffer(16, BF16, BF16.tile_bytes, 2 * width, core_set),                # output
        CircularBuffer(17, BF16, BF16.tile_bytes, width, core_set),                    # new conv state
        CircularBuffer(24, FP32, FP32.tile_bytes, width, core_set),                    # y of a head
        CircularBuffer(25, FP32, FP32.tile_bytes, 1, core_set),                        # sum of squares
        CircularBuffer(26, FP32, FP32.tile_bytes, 1, core_set),                        # rs
    ]
    reader = Kernel(GDN_KERNELS / "conv_reader.cpp", Role.RISCV_1, core_set,
                    x.accessor_args() + tap_weights.accessor_args(),
                    common_runtime_args=[x.address, conv_state.address, tap_weights.address, tokens, x.tiles_w])
    compute = Kernel(GDN_KERNELS / "conv_compute.cpp", Role.COMPUTE, core_set,
                     common_runtime_args=[_fp32_bits(EPS), _fp32_bits(dims.key_dim ** -0.5)],
                     compute_config=ComputeConfig(math_fidelity=CONV_NORM_FIDELITY, fp32_dest_acc_en=True))
    writer = Kernel(GDN_KERNELS / "conv_writer.cpp", Role.RISCV_0, core_set, out.accessor_args(),
                    common_runtime_args=[out.address, conv_state_out.address, tokens, out.tiles_w])
    for core, mine in zip(cores, owned):
        args = [len(mine)] + [v for i in mine for v in units[i]]
        for k in (reader, compute, writer):
            k.runtime_args[core] = list(args)
    _unpack_copies_to_dest(compute, cbs, (2, 24, 26))
    program = Program([reader, compute, writer], cbs,
                      inputs={"qkv": x, "conv_state": conv_state, "tap_weights": tap_weights},
                      outputs={"mixed": out, "conv_state": conv_state_out},
                      name=f"gdn_conv_T{tokens}_c{c}")
    _validate_l1(program, "the conv", "this does not depend on T; report it")
    return program


def gates_program(device, tokens: int, v_heads: int, a: DeviceTensor, b: DeviceTensor, dt_bias_rows: DeviceTensor,
                  a_log_rows: DeviceTensor, g: DeviceTensor, beta: DeviceTensor, *,
                  max_cores: int = MAX_CORES) -> Program:
    """beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias) on [T, HV] tiles."""
    for name, t in (("a", a), ("b", b)):
        _check_tensor(name, t, tokens, v_heads, BF16)
    for name, t in (("dt_bias rows", dt_bias_rows), ("A_log rows", a_log_rows)):
        _check_tensor(name, t, TILE, v_heads, FP32)
    for name, t in (("g", g), ("beta", beta)):
        _check_tensor(name, t, tokens, v_heads, FP32)
    plan = split_units(a.num_pages, max_cores)
    cores = _cores_of(plan)
    cbs = [CircularBuffer(i, BF16 if i < 2 else FP32, (BF16 if i < 2 else FP32).tile_bytes, 2, cores) for i in range(4)]
    cbs += [CircularBuffer(16, FP32, FP32.tile_bytes, 2, cores), CircularBuffer(17, FP32, FP32.tile_bytes, 2, cores)]
    reader = Kernel(GDN_KERNELS / "gates_reader.cpp", Role.RISCV_1, cores,
                    a.accessor_args() + dt_bias_rows.accessor_args(),
                    common_runtime_args=[a.address, b.address, dt_bias_rows.address, a_log_rows.address, a.tiles_w])
    compute = Kernel(GDN_KERNELS / "gates_compute.cpp", Role.COMPUTE, cores,
                     common_runtime_args=[_fp32_bits(SOFTPLUS_THRESHOLD)],
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=True))
    writer = Kernel(GDN_KERNELS / "gates_writer.cpp", Role.RISCV_0, cores, g.accessor_args(),
                    common_runtime_args=[g.address, beta.address])
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [first, count]
    _unpack_copies_to_dest(compute, cbs, (2, 3, 16, 17))
    return Program([reader, compute, writer], cbs, inputs={"a": a, "b": b}, outputs={"g": g, "beta": beta},
                   name=f"gdn_gates_T{tokens}_hv{v_heads}")


def norm_program(device, tokens: int, v_heads: int, value_dim: int, o: HeadColumns, z: DeviceTensor,
                 weight_rows: DeviceTensor, y: DeviceTensor, *, max_cores: int = MAX_CORES) -> Program:
    """y = w * (o * rsqrt(mean(o^2) + eps)) * silu(z) per value head."""
    vt = value_dim // TILE
    _check_tensor("o", o.tensor, tokens, 1)
    if o.first_col_tile + v_heads * vt > o.tensor.tiles_w:
        raise GdnShapeError(f"o tensor {o.tensor.shape} has no room for {v_heads} value heads of {value_dim}")
    for name, t in (("z", z), ("y", y)):
        _check_tensor(name, t, tokens, v_heads * value_dim, BF16)
    _check_tensor("norm weight rows", weight_rows, TILE, value_dim, FP32)
    plan = split_units(-(-tokens // TILE) * v_heads, max_cores)
    cores = _cores_of(plan)
    ofmt = o.tensor.data_format
    cbs = [
        CircularBuffer(0, ofmt, ofmt.tile_bytes, 2 * vt, cores),
        CircularBuffer(1, BF16, BF16.tile_bytes, 2 * vt, cores),
        CircularBuffer(2, FP32, FP32.tile_bytes, vt, cores),
        CircularBuffer(3, BF16, BF16.tile_bytes, 1, cores),
        CircularBuffer(16, BF16, BF16.tile_bytes, 4, cores),
        CircularBuffer(24, FP32, FP32.tile_bytes, 1, cores),
        CircularBuffer(25, FP32, FP32.tile_bytes, 1, cores),
    ]
    if ofmt != BF16:
        raise GdnShapeError("the norm reads o in bf16 (it shares the accessor with z)")
    reader = Kernel(GDN_KERNELS / "norm_reader.cpp", Role.RISCV_1, cores,
                    z.accessor_args() + weight_rows.accessor_args(),
                    common_runtime_args=[o.tensor.address, z.address, weight_rows.address, v_heads, vt,
                                         o.tensor.tiles_w, o.first_col_tile, z.tiles_w])
    compute = Kernel(GDN_KERNELS / "norm_compute.cpp", Role.COMPUTE, cores,
                     common_runtime_args=[vt, _fp32_bits(1.0 / value_dim), _fp32_bits(EPS)],
                     compute_config=ComputeConfig(math_fidelity=CONV_NORM_FIDELITY, fp32_dest_acc_en=True))
    writer = Kernel(GDN_KERNELS / "norm_writer.cpp", Role.RISCV_0, cores, y.accessor_args(),
                    common_runtime_args=[y.address, v_heads, vt, y.tiles_w])
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [first, count]
    _unpack_copies_to_dest(compute, cbs, (2, 25))
    return Program([reader, compute, writer], cbs, inputs={"o": o.tensor, "z": z, "weight_rows": weight_rows},
                   outputs={"y": y}, name=f"gdn_norm_T{tokens}_hv{v_heads}_v{value_dim}")


def conv_tap_rows(conv_weight: np.ndarray) -> np.ndarray:
    """[C, 4] depthwise conv weights -> [4 * 32, C] fp32: rows 32*tap .. 32*tap+31 all hold tap `tap`
    (row-broadcast tiles for the SFPU products)."""
    w = np.asarray(conv_weight, np.float32)
    if w.ndim != 2 or w.shape[1] != CONV_WIDTH:
        raise GdnShapeError(f"conv weight must be [channels, {CONV_WIDTH}]; got {w.shape}")
    return np.ascontiguousarray(np.repeat(w.T, TILE, axis=0))


def broadcast_rows(vector: np.ndarray) -> np.ndarray:
    """[n] -> [32, n] fp32 with every row equal (a row-broadcast tile row)."""
    return np.ascontiguousarray(np.broadcast_to(np.asarray(vector, np.float32)[None, :], (TILE, len(vector))))


class _Owned:
    """Device tensors of one call, freed together."""

    def __init__(self, device):
        self.device, self.tensors = device, []

    def upload(self, array, fmt):
        self.tensors.append(self.device.upload(np.ascontiguousarray(array, dtype=np.float32), fmt))
        return self.tensors[-1]

    def allocate(self, shape, fmt):
        self.tensors.append(self.device.allocate(shape, fmt))
        return self.tensors[-1]

    def free(self):
        for t in self.tensors:
            self.device.free(t)
        self.tensors = []


def _run(device, program, reports):
    report = device.run(program)
    if reports is not None:
        reports.append(report)
    return report


def _conv_state_array(conv_state, channels: int) -> np.ndarray:
    if conv_state is None:
        return np.zeros((CONV_WIDTH - 1, channels), np.float32)
    s = np.asarray(conv_state, np.float32)
    if s.shape != (CONV_WIDTH - 1, channels):
        raise GdnShapeError(f"conv_state must be [{CONV_WIDTH - 1}, {channels}]; got {s.shape}")
    return s


def gdn_conv(device, qkv, conv_weight, conv_state, dims: LayerDims, *, reports: list | None = None):
    """Conv1d + SiLU + q/k L2 norm (q scaled by K^-1/2) on the device.

    qkv [T, 2HK + HV V] pre-conv channels, conv_weight [C, 4], conv_state [3, C] or None.
    Returns (mixed [T, C] with q, k normalised, new conv state [3, C]); bf16 values as float32.
    """
    qkv = _as_array("qkv", qkv, 2)
    T, c = qkv.shape
    if c != dims.conv_channels:
        raise GdnShapeError(f"qkv has {c} channels; the layer has 2*H*K + HV*V = {dims.conv_channels}")
    own = _Owned(device)
    try:
        x = own.upload(qkv, BF16)
        state = own.upload(_conv_state_array(conv_state, c), BF16)
        taps = own.upload(conv_tap_rows(conv_weight), FP32)
        out = own.allocate((T, c), BF16)
        state_out = own.allocate((CONV_WIDTH - 1, c), BF16)
        _run(device, conv_program(device, dims, T, x, state, taps, out, state_out), reports)
        return device.download(out), device.download(state_out)
    finally:
        own.free()


def gdn_gates(device, a, b, A_log, dt_bias, *, reports: list | None = None):
    """beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias) on the device. a, b [T, HV] (bf16 on
    the device), A_log, dt_bias [HV]. Returns (g, beta) [T, HV] float32."""
    a, b = _as_array("a", a, 2), _as_array("b", b, 2)
    if a.shape != b.shape:
        raise GdnShapeError(f"a and b must have the same shape [T, HV]; got {a.shape} and {b.shape}")
    T, hv = a.shape
    for name, p in (("A_log", A_log), ("dt_bias", dt_bias)):
        if np.shape(p) != (hv,):
            raise GdnShapeError(f"{name} must be [HV] = [{hv}]; got {np.shape(p)}")
    own = _Owned(device)
    try:
        ta, tb = own.upload(a, BF16), own.upload(b, BF16)
        tdt, talog = own.upload(broadcast_rows(dt_bias), FP32), own.upload(broadcast_rows(A_log), FP32)
        tg, tbeta = own.allocate((T, hv), FP32), own.allocate((T, hv), FP32)
        _run(device, gates_program(device, T, hv, ta, tb, tdt, talog, tg, tbeta), reports)
        return device.download(tg), device.download(tbeta)
    finally:
        own.free()


def gdn_gated_norm(device, o, z, weight, *, reports: list | None = None):
    """y = w * (o * rsqrt(mean(o^2) + eps)) * silu(z) per value head on the device.
    o, z [T, HV, V] (bf16 on the device), weight [V]. Returns y [T, HV, V] float32."""
    o, z = _as_array("o", o, 3), _as_array("z", z, 3)
    if o.shape != z.shape:
        raise GdnShapeError(f"o and z must have the same shape [T, HV, V]; got {o.shape} and {z.shape}")
    T, hv, v = o.shape
    if v not in SUPPORTED_VALUE_DIMS:
        raise GdnShapeError(f"value head dim {v} is not supported; use one of {SUPPORTED_VALUE_DIMS}")
    if np.shape(weight) != (v,):
        raise GdnShapeError(f"norm weight must be [V] = [{v}]; got {np.shape(weight)}")
    own = _Owned(device)
    try:
        to, tz = own.upload(o.reshape(T, hv * v), BF16), own.upload(z.reshape(T, hv * v), BF16)
        tw = own.upload(broadcast_rows(weight), FP32)
        ty = own.allocate((T, hv * v), BF16)
        _run(device, norm_program(device, T, hv, v, HeadColumns(to), tz, tw, ty), reports)
        return device.download(ty).reshape(T, hv, v)
    finally:
        own.free()


# ------------------------------------------------------------------------------------------------
# The whole layer core: conv -> gates -> scan preparation -> scan sequential pass -> gated norm


@dataclass
class LayerTensors:
    """Device tensors of one layer-core call (inputs, weights, scratch and outputs)."""

    qkv: DeviceTensor            # [T, C] bf16, pre-conv
    z: DeviceTensor              # [T, HV V] bf16
    a: DeviceTensor              # [T, HV] bf16
    b: DeviceTensor              # [T, HV] bf16
    conv_state: DeviceTensor     # [3, C] bf16
    tap_weights: DeviceTensor    # [4 * 32, C] fp32
    dt_bias_rows: DeviceTensor   # [32, HV] fp32
    a_log_rows: DeviceTensor     # [32, HV] fp32
    norm_rows: DeviceTensor      # [32, V] fp32
    state: DeviceTensor          # [HV K, V] fp32, the recurrent state in
    mixed: DeviceTensor          # [T, C] bf16, conv output (q, k normalised)
    g: DeviceTensor              # [T, HV] fp32
    beta: DeviceTensor           # [T, HV] fp32
    scratch: ScanScratch
    o: DeviceTensor              # [T, HV V] bf16, scan output
    y: DeviceTensor              # [T, HV V] bf16, layer-core output
    conv_state_out: DeviceTensor
    final_state: DeviceTensor
    checkpoints: DeviceTensor    # [max(1, n) HV K, V] fp32


def allocate_layer_tensors(device, dims: LayerDims, tokens: int, chunk: int, num_checkpoints: int = 0,
                           record_format: DataFormat = FP32) -> LayerTensors:
    """Tensors for a layer-core call, without data (upload into them with device.write)."""
    s = ScanShape(tokens, dims.qk_heads, dims.v_heads, dims.key_dim, dims.value_dim, chunk)
    c, hv, vdim = dims.conv_channels, dims.v_heads, dims.value_dim
    al = device.allocate
    return LayerTensors(
        qkv=al((tokens, c), BF16), z=al((tokens, hv * vdim), BF16), a=al((tokens, hv), BF16), b=al((tokens, hv), BF16),
        conv_state=al((CONV_WIDTH - 1, c), BF16), tap_weights=al((CONV_WIDTH * TILE, c), FP32),
        dt_bias_rows=al((TILE, hv), FP32), a_log_rows=al((TILE, hv), FP32), norm_rows=al((TILE, vdim), FP32),
        state=al((hv * dims.key_dim, vdim), FP32), mixed=al((tokens, c), BF16), g=al((tokens, hv), FP32),
        beta=al((tokens, hv), FP32), scratch=allocate_scan_scratch(device, s, record_format),
        o=al((tokens, hv * vdim), BF16), y=al((tokens, hv * vdim), BF16),
        conv_state_out=al((CONV_WIDTH - 1, c), BF16), final_state=al((hv * dims.key_dim, vdim), FP32),
        checkpoints=al((max(1, num_checkpoints) * hv * dims.key_dim, vdim), FP32),
    )


def free_layer_tensors(device, t: LayerTensors) -> None:
    for name, value in vars(t).items():
        if name == "scratch":
            value.free(device)
        else:
            device.free(value)


def layer_programs(device, dims: LayerDims, tokens: int, chunk: int, t: LayerTensors, checkpoint_chunks=(), *,
                   block_tiles: int | None = None, fidelity: MathFidelity = SCAN_FIDELITY,
                   max_cores: int = MAX_CORES, fused: bool | None = None) -> list[Program]:
    """The programs of one layer core, in order, over the tensors of `t`: conv, gates, the scan (one
    fused program or two, scan_programs), gated norm."""
    s = ScanShape(tokens, dims.qk_heads, dims.v_heads, dims.key_dim, dims.value_dim, chunk)
    hk_tiles = dims.qk_heads * dims.key_tiles
    return [
        conv_program(device, dims, tokens, t.qkv, t.conv_state, t.tap_weights, t.mixed, t.conv_state_out,
                     max_cores=max_cores),
        gates_program(device, tokens, dims.v_heads, t.a, t.b, t.dt_bias_rows, t.a_log_rows, t.g, t.beta,
                      max_cores=max_cores),
        *scan_programs(device, s, HeadColumns(t.mixed, 0), HeadColumns(t.mixed, hk_tiles),
                       HeadColumns(t.mixed, 2 * hk_tiles), t.g, t.beta, t.scratch, t.state, HeadColumns(t.o),
                       t.final_state, t.checkpoints, list(checkpoint_chunks), fused=fused, block_tiles=block_tiles,
                       fidelity=fidelity, max_cores=max_cores),
        norm_program(device, tokens, dims.v_heads, dims.value_dim, HeadColumns(t.o), t.z, t.norm_rows, t.y,
                     max_cores=max_cores),
    ]


def dims_of(params) -> LayerDims:
    return LayerDims(params.num_qk_heads, params.num_v_heads, params.key_head_dim, params.value_head_dim)


def gdn_layer(device, qkv, z, a, b, params, conv_state=None, recurrent_state=None, chunk: int = 64,
              checkpoints=(), *, fidelity: MathFidelity = SCAN_FIDELITY, record_format: DataFormat = FP32,
              reports: list | None = None):
    """Everything of a GDN layer between its in-projections and its out-projection, on the device
    (the device twin of ttprefill.reference.gdn.gdn_layer_core).

    qkv [T, 2HK + HV V] pre-conv, z [T, HV V], a, b [T, HV]; params a GdnLayerParams;
    conv_state [3, C] or None; recurrent_state [HV, K, V] or None.
    record_format: Float32 (default) or Float16_b for the two-program scan's chunk records (P, T~,
    -T^): bf16 halves their DRAM traffic and costs accuracy (tests/test_gdn_kernels.py bounds it).
    Returns (y [T, HV V], new conv state [3, C], new recurrent state [HV, K, V],
    {p: recurrent state after p tokens} for the requested chunk-aligned checkpoints).
    """
    dims = dims_of(params)
    qkv, z = _as_array("qkv", qkv, 2), _as_array("z", z, 2)
    a, b = _as_array("a", a, 2), _as_array("b", b, 2)
    T, c = qkv.shape
    hv, kdim, vdim = dims.v_heads, dims.key_dim, dims.value_dim
    if c != dims.conv_channels:
        raise GdnShapeError(f"qkv has {c} channels; expected 2*H*K + HV*V = {dims.conv_channels}")
    for name, arr, shape in (("z", z, (T, hv * vdim)), ("a", a, (T, hv)), ("b", b, (T, hv))):
        if arr.shape != shape:
            raise GdnShapeError(f"{name} must be {list(shape)}; got {list(arr.shape)}")
    state0 = (np.zeros((hv, kdim, vdim), np.float32) if recurrent_state is None
              else np.asarray(recurrent_state, np.float32))
    if state0.shape != (hv, kdim, vdim):
        raise GdnShapeError(f"recurrent_state must be [HV, K, V] = {[hv, kdim, vdim]}; got {list(state0.shape)}")
    ScanShape(T, dims.qk_heads, hv, kdim, vdim, chunk)
    ck_device, ck_host = checkpoint_chunk_indices(checkpoints, T, chunk)
    conv_state = _conv_state_array(conv_state, c)
    taps = conv_tap_rows(params.conv_weight)
    if taps.shape[1] != c:
        raise GdnShapeError(f"conv weight has {taps.shape[1]} channels; the layer has {c}")
    for name, p, n in (("dt_bias", params.dt_bias, hv), ("A_log", params.A_log, hv),
                       ("norm_weight", params.norm_weight, vdim)):
        if np.shape(p) != (n,):
            raise GdnShapeError(f"{name} must be [{n}]; got {list(np.shape(p))}")
    t = allocate_layer_tensors(device, dims, T, chunk, len(ck_device), record_format)
    try:
        w = device.write
        w(t.qkv, qkv), w(t.z, z), w(t.a, a), w(t.b, b)
        w(t.conv_state, conv_state)
        w(t.tap_weights, taps)
        w(t.dt_bias_rows, broadcast_rows(params.dt_bias)), w(t.a_log_rows, broadcast_rows(params.A_log))
        w(t.norm_rows, broadcast_rows(params.norm_weight))
        w(t.state, state0.reshape(hv * kdim, vdim))
        for program in layer_programs(device, dims, T, chunk, t, ck_device, fidelity=fidelity):
            _run(device, program, reports)
        y = device.download(t.y)
        final = device.download(t.final_state).reshape(hv, kdim, vdim)
        states = {}
        if ck_device:
            all_ck = device.download(t.checkpoints).reshape(-1, hv, kdim, vdim)
            for i, ci in enumerate(ck_device):
                states[(ci + 1) * chunk] = all_ck[i]
        for p in ck_host:
            states[p] = state0.copy() if p == 0 else final.copy()
        return y, device.download(t.conv_state_out), final, states
    finally:
        free_layer_tensors(device, t)


# ------------------------------------------------------------------------------------------------
# Benchmark (`ttprefill bench gdn`)

# Above this many (token x value head) pairs the bench skips the fp64 reference (it would take
# minutes) and runs the simulator in timing-only mode unless told otherwise.
BENCH_REFERENCE_LIMIT = 1 << 16


def nominal_flops(shape: ScanShape) -> float:
    """GDN.md's FLOP count of the chunked scan: (6KV + 6CK + 4CV + C^2/3) per token per value head."""
    K, V, C = shape.key_dim, shape.value_dim, shape.chunk
    return float(shape.tokens * shape.v_heads * (6 * K * V + 6 * C * K + 4 * C * V + C * C / 3))


def min_dram_bytes(dims: LayerDims, tokens: int) -> float:
    """The least DRAM traffic a GDN layer core can have: read qkv, z, a, b (bf16) and the state and
    conv state, write y (bf16) and the state. Anything a kernel writes and reads back (chunk records,
    intermediates between programs) is on top of this."""
    activations = tokens * (dims.conv_channels + 2 * dims.v_heads * dims.value_dim + 2 * dims.v_heads) * 2
    states = 2 * dims.v_heads * dims.key_dim * dims.value_dim * 4 + 2 * 3 * dims.conv_channels * 2
    return float(activations + states)


def scan_min_dram_bytes(shape: ScanShape) -> float:
    """The least DRAM traffic of the chunked scan alone: read q, k, v (bf16), g and beta (fp32) and the
    state, write o (bf16) and the state."""
    s = shape
    reads = s.tokens * (2 * s.qk_heads * s.key_dim * 2 + s.v_heads * s.value_dim * 2 + 2 * s.v_heads * 4)
    writes = s.tokens * s.v_heads * s.value_dim * 2
    return float(reads + writes + 2 * s.v_heads * s.key_dim * s.value_dim * 4)


def bound_fraction(modeled_s: float, flops: float, dram_bytes: float, fidelity: MathFidelity) -> tuple[float, float]:
    """The time the FPU and DRAM together allow (the larger of flops at peak and bytes at peak
    bandwidth) and the fraction of it a run achieves (bound / modeled time; 1 is perfect)."""
    from ttprefill.timing import DRAM_PEAK_BYTES_PER_CYCLE, fpu_peak_flops_per_cycle

    bound_cycles = max(flops / fpu_peak_flops_per_cycle(MAX_CORES, fidelity), dram_bytes / DRAM_PEAK_BYTES_PER_CYCLE)
    bound_s = bound_cycles / 1e9
    return bound_s, bound_s / modeled_s


def _layer_inputs(dims: LayerDims, tokens: int, rng: np.random.Generator, *, values: bool = True):
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


def gdn_bench(args) -> dict:
    """One GDN layer core (conv, gates, scan, gated norm) on the device at the requested shape.

    Shape flags: --seq, --qk-heads, --v-heads, --key-dim, --value-dim, --chunk, --batch (independent
    sequences; they run as extra heads, which is what they are to the kernels); --fidelity, and
    --format fp32|bf16 for the scan's chunk records. Reports host wall
    time, modeled cycles / seconds / TFLOP/s / FPU and DRAM utilisation (TFLOP/s counts GDN.md's nominal
    chunked-scan FLOPs), a per-program breakdown, and PCC / relative RMS of y and the final state against
    the fp64 reference when the shape is small enough (T * HV * batch <= BENCH_REFERENCE_LIMIT).
    """
    from ttprefill.bench import device_for, finish_trace
    from ttprefill.timing import utilisation

    tokens = getattr(args, "seq", None) or 4096
    batch = getattr(args, "batch", None) or 1
    h = (getattr(args, "qk_heads", None) or 16) * batch
    hv = (getattr(args, "v_heads", None) or 48) * batch
    dims = LayerDims(h, hv, getattr(args, "key_dim", None) or 128, getattr(args, "value_dim", None) or 128)
    chunk = getattr(args, "chunk", None) or 64
    fidelity = MathFidelity[args.fidelity] if getattr(args, "fidelity", None) else SCAN_FIDELITY
    record_format = {None: FP32, "fp32": FP32, "bf16": BF16}.get(getattr(args, "format", None))
    if record_format is None:
        raise ValueError(f"--format for gdn chooses the scan's chunk-record format: fp32 (default) or bf16; "
                         f"got {args.format!r}")
    shape = ScanShape(tokens, h, hv, dims.key_dim, dims.value_dim, chunk)
    check = tokens * hv <= BENCH_REFERENCE_LIMIT
    if not check and getattr(args, "backend", "sim") == "sim":
        args.timing_only = True
    device = device_for(args)
    timing_only = bool(getattr(device, "timing_only", False))
    params, inputs = _layer_inputs(dims, tokens, np.random.default_rng(0), values=not timing_only)
    reports: list = []
    t0 = time.perf_counter()
    y, _, state, _ = gdn_layer(device, inputs["qkv"], inputs["z"], inputs["a"], inputs["b"], params,
                               inputs["conv_state"], inputs["recurrent_state"], chunk, fidelity=fidelity,
                               record_format=record_format, reports=reports)
    wall = time.perf_counter() - t0
    for r in reports:
        finish_trace(args, r)
    out = {"wall_s": wall,
           "shape": {"seq": tokens, "batch": batch, "qk_heads": h // batch, "v_heads": hv // batch,
                     "key_dim": dims.key_dim, "value_dim": dims.value_dim, "chunk": chunk,
                     "fidelity": fidelity.name, "records": record_format.name, "timing_only": timing_only}}
    if reports and getattr(device, "kind", "") == "sim":
        total = _CombinedReport(reports)
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
        out["scan_modeled_s"] = scan_cycles / 1e9
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


@dataclass
class _CombinedReport:
    """Programs run back to back: cycles add up, counters add up."""

    reports: list
    cycles: int = 0
    counters: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cycles = sum(r.cycles for r in self.reports)
        for r in self.reports:
            for key, value in r.counters.items():
                if isinstance(value, (int, float)):
                    self.counters[key] = self.counters.get(key, 0) + value


# ------------------------------------------------------------------------------------------------
# Representative programs for the checks against the real ttnn (tests/host)

from ttprefill.ops.registry import build_device, register  # noqa: E402


def _offline_layer(tokens: int, dims: LayerDims, chunk: int, checkpoints: int = 0, fused: bool = False):
    """The layer core's programs on an offline device: conv, gates, gate vectors, then with fused=False
    the preparation and the sequential pass (indices 3 and 4), with fused=True the fused scan (3)."""
    device = build_device()
    t = allocate_layer_tensors(device, dims, tokens, chunk, checkpoints)
    return layer_programs(device, dims, tokens, chunk, t, list(range(checkpoints)), fused=fused)


_SMALL = LayerDims(2, 4, 64, 64)
_QWEN = LayerDims(16, 48, 128, 128)


# name: (tokens, dims, chunk, checkpoints, fused, index of the program in _offline_layer's list)
_REGISTERED_LAYER_PROGRAMS = {
    "gdn/conv_T100_h2x4_k64v64": (100, _SMALL, 64, 0, False, 0),
    "gdn/gates_T100_hv4": (100, _SMALL, 64, 0, False, 1),
    "gdn/gate_vectors_T130_hv4_c64": (130, _SMALL, 64, 0, False, 2),
    "gdn/scan_prep_T130_h2x4_k64v64_c64": (130, _SMALL, 64, 0, False, 3),
    "gdn/scan_seq_T130_h2x4_k64v64_c32_ckpt": (130, _SMALL, 32, 2, False, 4),
    "gdn/norm_T100_hv4_v64": (100, _SMALL, 64, 0, False, 5),
    "gdn/scan_prep_T256_h16x48_k128v128_c128": (256, _QWEN, 128, 0, False, 3),
    "gdn/scan_seq_T256_h16x48_k128v128_c64": (256, _QWEN, 64, 0, False, 4),
    "gdn/scan_fused_T130_h2x4_k64v64_c32_ckpt": (130, _SMALL, 32, 2, True, 3),
    "gdn/scan_fused_T256_h16x48_k128v128_c64": (256, _QWEN, 64, 0, True, 3),
}


def _register_layer_program(name: str, tokens: int, dims: LayerDims, chunk: int, checkpoints: int, fused: bool,
                            index: int) -> None:
    register(name)(lambda: _offline_layer(tokens, dims, chunk, checkpoints=checkpoints, fused=fused)[index])


for _name, _spec in _REGISTERED_LAYER_PROGRAMS.items():
    _register_layer_program(_name, *_spec)
