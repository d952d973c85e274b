"""The GDN kernels' shapes and their limits: ScanShape (one scan call), GdnDims (one layer's head
layout, the one GDN dims type the model layer uses too), HeadColumns, the supported sizes, the
defaults (chunk, fidelities) and the errors."""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import DST_TILES_FP32, TILE

# The chunk the scan runs at unless told otherwise (the module docstring of ttprefill.ops.gdn says why 64).
DEFAULT_CHUNK = 64
SUPPORTED_KEY_DIMS = (64, 128)
SUPPORTED_VALUE_DIMS = (64, 128, 256)
SUPPORTED_CHUNKS = (32, 64, 128)
CONV_WIDTH = 4
EPS = 1e-6
# Constant tiles of the scan preparation (kernels/gdn/scan_prep_consts.h: kNumConsts).
PREP_CONST_TILES = 9
# Diagonal tiles of T inverted side by side (kernels/gdn/scan_prep_chunk.h: kInverseLanes).
INVERSE_LANES = 2
# DST tiles per acquire with fp32 accumulation (hw.py).
DST_TILES = DST_TILES_FP32
# Gate-vector quantities without the per-tile-boundary ones (kernels/gdn/gate_vectors.h: kFromTileEnd).
GATE_VECTOR_KINDS_BASE = 7

BF16 = DataFormat.Float16_b
FP32 = DataFormat.Float32


def zba_columns(v_heads: int, value_dim: int) -> tuple[int, int, int]:
    """Column tiles of b and a in the merged z | b | a projection output, and its width: z's HV V columns, then b
    and a each padded to whole tile columns (the gates program reads whole tiles; the pad columns are zero rows
    of the weight)."""
    b_tile = v_heads * value_dim // TILE
    a_tile = b_tile + -(-v_heads // TILE)
    return b_tile, a_tile, (2 * a_tile - b_tile) * TILE


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
# limits in ttprefill.ops.gdn's docstring: C = 32 keeps rel RMS 0.01 to beta |k|^2 ~ 1.6 instead of ~1.7).
# It saves a quarter of every matmul's FPU time: the 27B scan at 8k is 7.5% faster (modeled). Pass
# fidelity=MathFidelity.HiFi4 for keys longer than unit length.
SCAN_FIDELITY = MathFidelity.HiFi3


class GdnShapeError(ValueError):
    """Inputs whose shapes disagree or that the kernels do not support."""


class GdnCheckpointError(ValueError):
    """A requested checkpoint position the chunked scan cannot produce."""


@dataclass(frozen=True)
class ScanShape:
    """The sizes of one scan: T tokens, H q/k heads, HV value heads, head dims K and V, chunk C."""

    tokens: int
    qk_heads: int
    v_heads: int
    key_dim: int
    value_dim: int
    chunk: int = DEFAULT_CHUNK

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

    @classmethod
    def of(cls, dims: "GdnDims", tokens: int, chunk: int = DEFAULT_CHUNK) -> "ScanShape":
        return cls(tokens, dims.qk_heads, dims.v_heads, dims.key_dim, dims.value_dim, chunk)

    @property
    def dims(self) -> "GdnDims":
        return GdnDims(self.qk_heads, self.v_heads, self.key_dim, self.value_dim)

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


@dataclass
class HeadColumns:
    """Where a family of heads sits in a token-major tensor: its first column tile."""

    tensor: DeviceTensor
    first_col_tile: int = 0


# Norm modes of a conv unit (kernels/gdn/conv_consts.h).
CONV_NORM_NONE, CONV_NORM_L2, CONV_NORM_L2_SCALED = 0, 1, 2
CONV_CONST_TILES = 7  # conv_consts.h: kConvNumConsts
SOFTPLUS_THRESHOLD = 20.0  # softplus(x) = x above it (as torch's default)


@dataclass(frozen=True)
class GdnDims:
    """One GDN layer's head layout: H q/k heads, HV value heads, head dims K and V. Its channels are
    qkv = [q heads | k heads | v heads]."""

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
