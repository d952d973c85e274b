"""Causal flash-attention prefill over a paged K/V cache.

What it computes: for a chunk of Sq new query tokens at absolute positions [p0, p0 + Sq), softmax
attention against the keys/values at [0, p0 + Sq); query head h reads kv head h // (Hq / Hkv); the
key at position j is visible to the query at position p iff j <= p; optionally out * sigmoid(gate).
The reference is ttprefill.reference.attention.causal_attention.

Two programs per call:
* kv_cache_write: the chunk's own K and V go into their cache pages (converted to the page format;
  a chunk that starts inside a 32-token tile keeps the prefix rows already in that tile);
* flash_attention: reads Q, and K/V for every visible key from the pages, and writes O.

K/V cache (KVCache): two pools in DRAM, one for K and one for V, each a tiled tensor
[num_pages, kv_heads, page_tokens, head_dim] in bf16 or bfp8_b. A page holds page_tokens tokens of
every kv head. The page table (list of physical page ids, one per logical block of page_tokens
tokens; owned by the prefix cache) goes to DRAM as a UInt32 tensor [rows, 32] (entry i at row i // 32,
column i % 32) that the kernels read once into L1, so a 32k context costs no runtime args.

Work split: a work unit is (head group, query block): Bq query tile-rows of `hpu` query heads that
read the same kv head (hpu divides the GQA group), R = hpu * Bq rows that share every K/V block the unit
reads; that sharing keeps DRAM traffic below the FPU's appetite. plan_attention picks Bk, Bq and hpu
with a small cost model (busiest core vs DRAM traffic) and spreads the units over up to 64 cores by
longest-processing-time first: unit costs are causal (visible key tiles), so each core ends up with a
mix of early (cheap) and late (expensive) query blocks. Key blocks of Bk tiles are double-buffered;
blocks entirely above the diagonal are never read, tiles that straddle it start from a mask tile.

Numerics (kernels/flash_attention/compute.cpp has the details): bf16 Q/K/V/O, bf16 or bfp8_b pages;
the running shift m is subtracted inside the scores matmul (one extra k-step), so S - m forms in the
fp32 accumulator and P = exp(scale (S - m)) (scale folded in) comes straight out of DST; m only moves
when a block's probabilities under the old m would sum past e^lazy_rescale_nats (then O and l are
rescaled exactly, on the SFPU). Row sums: the packer sums each row's P tiles element-wise (bf16 partials, restarted each key block)
(L1 accumulation) and one REDUCE_ROW per row and key block finishes them; row sums and O are fp32 (O stays in L1 for the whole unit: each block's P V is added onto it by the packer's
L1 accumulation, so it is never unpacked); HiFi2 by default. With HiFi2 the matrix unit keeps 6 of bf16's 7 mantissa bits
of its first operand (the simulator's fidelity model), which truncates Q in Q K^T: scores shrink by
~0.3 % and outputs by about as much (the main error term against fp64; HiFi4 removes it). It also
truncates P in P V, while the row sums add the untruncated fp32 P, so that truncation no longer cancels
in O / l: rel RMS against fp64 ~0.0077 (was ~0.0062 with P @ ones row sums) at 1k tokens, d128/d256.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field, replace

import numpy as np

from ttprefill.device.formats import bf16_bits
from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.offline_device import OfflineDevice
from ttprefill.device.program import (
    CB_ALIGNMENT,
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
    float32_cbs,
)
from ttprefill.device.tensor import DeviceTensor
from ttprefill.device.ttnn_checks import HARDWARE_CB_BUDGET, MAX_RUNTIME_ARGS
from ttprefill.ops.registry import build_device, register

KERNELS = KERNELS_DIR / "flash_attention"
TILE = 32
SUPPORTED_HEAD_DIMS = (64, 128, 256)
PAGE_FORMATS = (DataFormat.Float16_b, DataFormat.Bfp8_b)
MAX_CORES = 64

# Circular-buffer indices; the kernels name the same numbers in flash_attention_common.h.
CB_Q, CB_K, CB_V, CB_MASK, CB_ONES, CB_GATE, CB_TABLE, CB_SPREAD = 0, 1, 2, 3, 4, 5, 6, 7
CB_OUT, CB_PSUM = 16, 17
CB_M_NEW, CB_BMAX, CB_L_INV, CB_O_TMP, CB_S, CB_P, CB_O, CB_M, CB_L, CB_SHIFT, CB_L_NEW, CB_ALPHA = (
    20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31)
NUM_MASK_TILES = 3
# kv_cache_write's CBs (kv_write_*.cpp).
CB_KV_NEW, CB_KV_KEEP, CB_KV_PAGE = 0, 1, 16

# Runtime args before the list of units, per kernel (see the kernels' header comments).
READER_FIXED_ARGS, COMPUTE_FIXED_ARGS, WRITER_FIXED_ARGS = 9, 7, 7
MAX_UNITS_PER_CORE = MAX_RUNTIME_ARGS - max(READER_FIXED_ARGS, COMPUTE_FIXED_ARGS, WRITER_FIXED_ARGS)

# The cost model that picks block sizes, in modeled cycles, calibrated on the simulator's timing model:
# one score tile costs its two matmuls (Dt tile matmuls each) plus roughly this much softmax work.
_SOFTMAX_CYCLES_PER_SCORE_TILE = 50
_SEED_CYCLES_PER_ROW = 800  # a unit's first shift: each row's max over key tile 0
_SEED_CYCLES_PER_ROW_DIM_TILE = 100
_ROW_CYCLES = 2500  # per query tile-row of a unit: 1 / l, the state CBs, pipeline fill
_STEP_CYCLES = 300  # per key block and query tile-row: moving the state CBs, the guard, inits
_ROW_CYCLES_PER_DIM_TILE = 300  # per row and head-dim tile: Q load, O / l, output pack
MAX_UNIT_ROWS = 16  # query tile-rows per unit considered (more share K/V better but load-balance worse)
_MATMUL_CYCLES_PER_PHASE = 16
_DRAM_BYTES_PER_CYCLE = 240.0  # 12 channels x 22.2 B/cycle (WORMHOLE.md), ~90 % reached under contention


# ------------------------------------------------------------------------------------------ errors


class FlashAttentionError(ValueError):
    """A flash-attention call that cannot run as asked; raised before anything is dispatched."""


class HeadCountError(FlashAttentionError):
    pass


class HeadDimError(FlashAttentionError):
    pass


class ShapeError(FlashAttentionError):
    pass


class PageTableError(FlashAttentionError):
    pass


class CacheCapacityError(FlashAttentionError):
    pass


class L1BudgetError(FlashAttentionError, L1OverflowError):
    """The circular buffers for the chosen block sizes do not fit a core's L1."""


# ------------------------------------------------------------------------------------------ config


@dataclass(frozen=True)
class FlashAttentionConfig:
    """Knobs of the attention program. None means: chosen automatically."""

    k_block_tiles: int | None = None  # Bk: key tiles per streamed K/V block
    q_block_tiles: int | None = None  # Bq: query tile-rows per head in a work unit
    heads_per_unit: int | None = None  # query heads of one GQA group in a work unit (divides the group)
    max_cores: int = MAX_CORES
    math_fidelity: MathFidelity = MathFidelity.HiFi2
    fp32_dest_acc: bool = True
    exp_approx: bool = True  # the SFPU's fast exp, as tt-metal's SDPA uses (the simulator computes exp exactly)
    scores_format: DataFormat = DataFormat.Float32
    # Lazy rescaling: a key block is scored against the row's current shift m (the max when it was last
    # set) and kept while no row's block sum of probabilities exceeds e^this; otherwise m moves to the new
    # max and O, l are rescaled. Larger: fewer rescales, larger (still exact in bf16/fp32) probabilities.
    lazy_rescale_nats: float = 20.0

    def compute_config(self) -> ComputeConfig:
        return ComputeConfig(math_fidelity=self.math_fidelity, fp32_dest_acc_en=self.fp32_dest_acc,
                             math_approx_mode=self.exp_approx)


DEFAULT_K_BLOCK_TILES = 8
# The compute kernel's fp32 CBs it reads only by copy_tile (the rescaled output chunk, the running row
# sum, the shift and the rescale factor): in UnpackToDestFp32 mode they reach fp32 DST exactly instead
# of as TF32. cb_o and cb_s are FPU operands too, which that mode does not allow (the simulator refuses it).
COPY_ONLY_FP32_CBS = (23, 28, 29, 31)
# e^30 ~ 1e13: probabilities that large still leave fp32 row sums over a million keys far from overflow.
MAX_LAZY_RESCALE_NATS = 30.0


# ------------------------------------------------------------------------------------------ cache


@dataclass
class KVCache:
    """The paged K/V pool in device DRAM: K and V pools [num_pages, kv_heads, page_tokens, head_dim]."""

    device: object
    k_pool: DeviceTensor
    v_pool: DeviceTensor
    page_tokens: int
    kv_heads: int
    head_dim: int
    data_format: DataFormat

    @classmethod
    def create(cls, device, num_pages: int, page_tokens: int, kv_heads: int, head_dim: int,
               data_format: DataFormat = DataFormat.Float16_b) -> "KVCache":
        """Allocates both pools; on a device that holds data they start zeroed (finite padding)."""
        if num_pages < 1:
            raise CacheCapacityError(f"a K/V cache needs at least one page, got num_pages={num_pages}")
        if page_tokens < TILE or page_tokens % TILE:
            raise ShapeError(f"page_tokens={page_tokens}: a page must hold a whole number of 32-token tiles "
                             "(use 32, 64, 128, ...)")
        if head_dim not in SUPPORTED_HEAD_DIMS:
            raise HeadDimError(f"head_dim={head_dim} is not supported; use one of {SUPPORTED_HEAD_DIMS}")
        data_format = DataFormat(data_format)
        if data_format not in PAGE_FORMATS:
            raise ShapeError(f"cache pages in {data_format.name} are not supported; use Float16_b or Bfp8_b")
        shape = (num_pages, kv_heads, page_tokens, head_dim)
        k_pool = device.allocate(shape, data_format)
        v_pool = device.allocate(shape, data_format)
        if not isinstance(device, OfflineDevice):
            zeros = np.zeros(shape, np.float32)
            device.write(k_pool, zeros)
            device.write(v_pool, zeros)
        return cls(device, k_pool, v_pool, page_tokens, kv_heads, head_dim, data_format)

    @property
    def num_pages(self) -> int:
        return self.k_pool.shape[0]

    @property
    def capacity_tokens(self) -> int:
        return self.num_pages * self.page_tokens

    @property
    def page_tiles(self) -> int:
        return self.page_tokens // TILE

    def read(self, page_table, tokens: int) -> tuple[np.ndarray, np.ndarray]:
        """K and V of logical tokens [0, tokens) as [tokens, kv_heads, head_dim] (for tests and debugging)."""
        check_page_table(self, page_table, tokens)
        k_pages, v_pages = self.device.download(self.k_pool), self.device.download(self.v_pool)
        blocks = -(-tokens // self.page_tokens)
        pages = list(page_table)[:blocks]
        k = np.concatenate([k_pages[p] for p in pages], axis=1)[:, :tokens]  # [Hkv, tokens, D]
        v = np.concatenate([v_pages[p] for p in pages], axis=1)[:, :tokens]
        return k.transpose(1, 0, 2), v.transpose(1, 0, 2)

    def free(self) -> None:
        self.device.free(self.k_pool)
        self.device.free(self.v_pool)


def check_page_table(cache: KVCache, page_table, tokens: int) -> list[int]:
    """The pages holding logical tokens [0, tokens), validated against the cache."""
    if tokens > cache.capacity_tokens:
        raise CacheCapacityError(
            f"{tokens} tokens do not fit the K/V cache: {cache.num_pages} pages x {cache.page_tokens} tokens = "
            f"{cache.capacity_tokens}; create the cache with more pages or prefill a shorter context")
    table = [int(p) for p in page_table]
    blocks = -(-tokens // cache.page_tokens)
    if len(table) < blocks:
        raise PageTableError(
            f"page table has {len(table)} entries but {tokens} tokens need {blocks} pages of {cache.page_tokens} "
            "tokens; allocate pages for every block up to the end of this chunk")
    used = table[:blocks]
    bad = [p for p in used if not 0 <= p < cache.num_pages]
    if bad:
        raise PageTableError(f"page table names page {bad[0]} outside the pool of {cache.num_pages} pages "
                             f"(valid ids 0..{cache.num_pages - 1})")
    if len(set(used)) != len(used):
        dup = next(p for p in used if used.count(p) > 1)
        raise PageTableError(f"page table names page {dup} for two blocks; every block needs its own page")
    return used


def page_table_tensor_shape(entries: int) -> tuple[int, int]:
    return (max(1, -(-entries // TILE)), TILE)


def upload_page_table(device, page_table) -> DeviceTensor:
    """The table as the UInt32 [rows, 32] tensor the kernels read (entry i at row i // 32, column i % 32)."""
    table = np.asarray([int(p) for p in page_table], dtype=np.int64)
    rows, cols = page_table_tensor_shape(len(table))
    padded = np.zeros(rows * cols, dtype=np.uint32)
    padded[: len(table)] = table
    return device.upload(padded.reshape(rows, cols), DataFormat.UInt32)


# ------------------------------------------------------------------------------------------ plan


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class AttentionPlan:
    """Block sizes, work split and CB sizes of one attention program; derived from shapes + config."""

    q_heads: int
    kv_heads: int
    head_dim: int
    sq: int
    p0: int
    page_format: DataFormat
    gated: bool
    config: FlashAttentionConfig
    bk: int  # key tiles per block
    bq: int  # query tile-rows per head per unit
    hpu: int  # query heads per unit (divides group)
    core_units: tuple[tuple[int, ...], ...] = field(default=())  # packed units per core

    @property
    def dt(self) -> int:
        return self.head_dim // TILE

    @property
    def group(self) -> int:
        return self.q_heads // self.kv_heads

    @property
    def rows(self) -> int:
        return self.hpu * self.bq

    @property
    def head_groups(self) -> int:
        return self.q_heads // self.hpu

    def units(self) -> list[tuple[int, int]]:
        """(head group, query block) of every work unit."""
        return [(hg, b) for hg in range(self.head_groups) for b in range(self.q_blocks)]

    @property
    def rt(self) -> int:
        return 2 if self.rows % 2 == 0 else 1

    @property
    def dst_tiles(self) -> int:
        return 4 if self.config.fp32_dest_acc else 8

    @property
    def ct_s(self) -> int:
        return min(self.dst_tiles // self.rt, self.bk)

    @property
    def ct_o(self) -> int:
        return min(self.dst_tiles // self.rt, self.dt)

    @property
    def q_blocks(self) -> int:
        return _ceil_div(_ceil_div(self.sq, TILE), self.bq)

    @property
    def q_rows_per_head(self) -> int:
        """Rows of the Q / gate / output tensors per head: Sq padded to whole query blocks."""
        return self.q_blocks * self.bq * TILE

    def unit_key_tiles(self, q_block: int) -> int:
        rows_end = min((q_block + 1) * self.bq * TILE, self.sq)
        return (self.p0 + rows_end - 1) // TILE + 1

    @property
    def cores(self) -> list[CoreCoord]:
        return [CoreCoord(i % 8, i // 8) for i in range(len(self.core_units))]

    def circular_buffers(self, table_tiles: int) -> list[tuple[int, DataFormat, int]]:
        """(index, format, pages) of every CB on a core. With room to spare in L1, cb_out grows to a whole
        unit's output (so the end of a unit never waits for the writer, whose DRAM writes queue behind
        the other cores' K/V reads), then Q is double-buffered (the next unit's Q loads while this one
        computes)."""
        others = self._cbs_without_q(table_tiles)
        q_tiles = self.rows * self.dt
        q_bytes = _aligned(q_tiles * DataFormat.Float16_b.tile_bytes)
        bf16 = DataFormat.Float16_b
        group_tiles = self.rt * self.dt
        small_out = 2 * group_tiles
        spare = HARDWARE_CB_BUDGET - _cb_bytes(others) - q_bytes
        extra_groups = max(0, spare // (group_tiles * bf16.tile_bytes))
        out_tiles = min(self.rows * self.dt, small_out + extra_groups * group_tiles)
        others = [(i, f, out_tiles if i == CB_OUT else n) for i, f, n in others]
        buffers = 2 if _cb_bytes(others) + 2 * q_bytes <= HARDWARE_CB_BUDGET else 1
        return [(CB_Q, DataFormat.Float16_b, buffers * q_tiles)] + others

    def _cbs_without_q(self, table_tiles: int) -> list[tuple[int, DataFormat, int]]:
        f32, bf16, bfp8 = DataFormat.Float32, DataFormat.Float16_b, DataFormat.Bfp8_b
        rows, dt, bk, rt = self.rows, self.dt, self.bk, self.rt
        chunk = rt * self.ct_o
        cbs = [
            (CB_K, self.page_format, 2 * bk * dt),
            (CB_V, self.page_format, 2 * bk * dt),
            (CB_MASK, bf16, NUM_MASK_TILES),
            (CB_ONES, bfp8, 1),
            (CB_TABLE, DataFormat.UInt32, table_tiles),
            (CB_SPREAD, bfp8, self.ct_s),
            (CB_OUT, bf16, 2 * rt * dt),  # the writer drains a row group's output per write barrier
            (CB_PSUM, bf16, 2 * rt),  # a block's probabilities summed element-wise by the packer, two row groups
            (CB_M_NEW, bfp8, rt),
            (CB_BMAX, f32, rt),
            (CB_L_INV, f32, rt),
            (CB_O_TMP, f32, chunk),
            (CB_S, self.config.scores_format, rt * bk),
            (CB_P, bf16, 2 * rt * bk),  # two row groups: the next one's scores are formed before this one's P V
            (CB_O, f32, rows * dt),  # the unit's output, accumulated in place (packer L1 accumulation)
            (CB_M, bfp8, rows),
            (CB_L, f32, rows + rt),  # + the new sums, packed before the old ones go
            (CB_SHIFT, f32, rt),
            (CB_L_NEW, bf16, rt),  # only read by the overflow guard, which allows for its rounding
            (CB_ALPHA, f32, rt),
        ]
        if self.gated:
            cbs.append((CB_GATE, bf16, 2 * chunk))
        return cbs

    def l1_bytes(self, table_tiles: int) -> int:
        return _cb_bytes(self.circular_buffers(table_tiles))


def _aligned(nbytes: int) -> int:
    return _ceil_div(nbytes, CB_ALIGNMENT) * CB_ALIGNMENT


def _cb_bytes(cbs) -> int:
    return sum(_aligned(fmt.tile_bytes * pages) for _, fmt, pages in cbs)


def _lpt(costs: list[tuple[int, int]], n_cores: int) -> list[list[int]]:
    """Longest processing time first: units (cost, packed) onto n_cores, each to the least loaded core."""
    heap = [(0, i) for i in range(n_cores)]
    out: list[list[int]] = [[] for _ in range(n_cores)]
    for cost, packed in sorted(costs, key=lambda c: (-c[0], c[1])):
        load, i = heapq.heappop(heap)
        out[i].append(packed)
        heapq.heappush(heap, (load + cost, i))
    return [sorted(units) for units in out if units]


def pack_unit(head_group: int, q_block: int) -> int:
    return (head_group << 16) | q_block


def _unit_cycles(plan: AttentionPlan, q_block: int) -> float:
    """Modeled cycles of one unit, from the kernel's measured shape on the simulator: per score tile the
    two matmuls plus the softmax work, per row the first shift, the per-block state updates, the Q load
    and the final normalisation (the slow path is assumed rare)."""
    phases = plan.config.math_fidelity.phases
    per_score_tile = 2 * plan.dt * _MATMUL_CYCLES_PER_PHASE * phases + _SOFTMAX_CYCLES_PER_SCORE_TILE
    if plan.rt == 1 and plan.rows > 1:
        per_score_tile *= 1.25  # 1-row matmul blocks unpack more per FLOP
    key_tiles = plan.unit_key_tiles(q_block)
    key_blocks = _ceil_div(key_tiles, plan.bk)
    seed = _SEED_CYCLES_PER_ROW + plan.dt * _SEED_CYCLES_PER_ROW_DIM_TILE
    return plan.rows * (key_tiles * per_score_tile + seed + key_blocks * _STEP_CYCLES + _ROW_CYCLES
                        + plan.dt * _ROW_CYCLES_PER_DIM_TILE)


def _exposed_q_load_cycles(plan: AttentionPlan, table_tiles: int, n_cores: int) -> float:
    """A unit's Q load when L1 has no room for a second Q buffer: it no longer overlaps the previous unit,
    and it shares DRAM with every core's K/V reads, so it runs at about a core's share of the bandwidth
    (this is what makes a near-full-L1 plan slower than its compute alone suggests)."""
    q_tiles = plan.rows * plan.dt
    q_buffers = next(n for i, _, n in plan.circular_buffers(table_tiles) if i == CB_Q) // q_tiles
    if q_buffers >= 2:
        return 0.0
    return q_tiles * DataFormat.Float16_b.tile_bytes / (_DRAM_BYTES_PER_CYCLE / n_cores)


def _split_units(plan: AttentionPlan, table_tiles: int = 1) -> tuple[tuple[tuple[int, ...], ...], float]:
    """(units per core, modeled makespan in cycles)."""
    n_cores = min(plan.config.max_cores, len(plan.units()))
    q_load = _exposed_q_load_cycles(plan, table_tiles, n_cores)
    costs = [(_unit_cycles(plan, b) + q_load, pack_unit(hg, b)) for hg, b in plan.units()]
    per_core = _lpt(costs, n_cores)
    loads = {packed: cost for cost, packed in costs}
    makespan = max(sum(loads[u] for u in units) for units in per_core)
    return tuple(tuple(u) for u in per_core), makespan


def _estimated_cycles(plan: AttentionPlan, makespan: float) -> float:
    """The slower of the busiest core and the DRAM traffic (K/V read once per unit)."""
    kv_bytes = sum(plan.unit_key_tiles(b) for _, b in plan.units()) * 2 * plan.dt * plan.page_format.tile_bytes
    return max(makespan, kv_bytes / _DRAM_BYTES_PER_CYCLE)


def _divisors(n: int) -> list[int]:
    return [d for d in range(n, 0, -1) if n % d == 0]


def plan_attention(q_heads: int, kv_heads: int, head_dim: int, sq: int, p0: int, page_format: DataFormat,
                   gated: bool = False, config: FlashAttentionConfig | None = None,
                   table_entries: int = 1) -> AttentionPlan:
    """Checks the shape and picks block sizes and the work split (raises FlashAttentionError subclasses).

    Candidates: Bk in (16, 8, 4) key tiles, Bq in (16, 8, 4, 2, 1) query tile-rows and every divisor of
    the GQA group as heads per unit, with at most MAX_UNIT_ROWS rows per unit, CBs within L1 and units
    within the runtime-arg limit; the one with the fewest modeled cycles wins (ties: more rows per unit,
    which read K/V fewer times).
    """
    config = config or FlashAttentionConfig()
    if q_heads < 1 or kv_heads < 1 or q_heads % kv_heads:
        raise HeadCountError(f"query heads ({q_heads}) must be a positive multiple of kv heads ({kv_heads}) "
                             "for grouped-query attention")
    if head_dim not in SUPPORTED_HEAD_DIMS:
        raise HeadDimError(f"head_dim={head_dim} is not supported; use one of {SUPPORTED_HEAD_DIMS}")
    if sq < 1:
        raise ShapeError(f"the chunk has {sq} query tokens; it needs at least one")
    if p0 < 0:
        raise ShapeError(f"p0={p0}: the chunk's first position cannot be negative")
    if q_heads >= 1 << 16 or _ceil_div(sq, TILE) >= 1 << 16:
        raise ShapeError("too many heads or query blocks for the 16-bit fields of a work unit")
    if config.scores_format not in (DataFormat.Float32, DataFormat.Float16_b):
        raise FlashAttentionError(f"scores_format={config.scores_format!r}: use DataFormat.Float32 or Float16_b")
    if not 0.0 <= config.lazy_rescale_nats <= MAX_LAZY_RESCALE_NATS:
        raise FlashAttentionError(f"lazy_rescale_nats={config.lazy_rescale_nats}: use 0..{MAX_LAZY_RESCALE_NATS} "
                                  "(probabilities reach e^that before the shift moves)")
    if not 1 <= config.max_cores <= MAX_CORES:
        raise FlashAttentionError(f"max_cores={config.max_cores}: use 1..{MAX_CORES}")
    group = q_heads // kv_heads
    for value, name in ((config.k_block_tiles, "k_block_tiles"), (config.q_block_tiles, "q_block_tiles"),
                        (config.heads_per_unit, "heads_per_unit")):
        if value is not None and value < 1:
            raise FlashAttentionError(f"{name}={value} must be at least 1")
    if config.heads_per_unit is not None and group % config.heads_per_unit:
        raise FlashAttentionError(f"heads_per_unit={config.heads_per_unit} must divide the {group} query heads "
                                  "per kv head")
    table_tiles = _ceil_div(max(1, table_entries), TILE * TILE)
    q_tiles = _ceil_div(sq, TILE)

    bk_choices = [config.k_block_tiles] if config.k_block_tiles else [16, DEFAULT_K_BLOCK_TILES, 4]
    bq_choices = [config.q_block_tiles] if config.q_block_tiles else \
        [b for b in (16, 8, 4, 2, 1) if b <= q_tiles] or [1]
    hpu_choices = [config.heads_per_unit] if config.heads_per_unit else _divisors(group)
    user_sized = config.q_block_tiles is not None or config.heads_per_unit is not None

    best, best_cycles, smallest = None, 0.0, None
    for bk in bk_choices:
        for bq in bq_choices:
            for hpu in hpu_choices:
                if not user_sized and hpu * bq > MAX_UNIT_ROWS:
                    continue
                plan = AttentionPlan(q_heads, kv_heads, head_dim, sq, p0, DataFormat(page_format), gated, config,
                                     bk, bq, hpu)
                need = plan.l1_bytes(table_tiles)
                if smallest is None or need < smallest[0]:
                    smallest = (need, plan)
                if need > HARDWARE_CB_BUDGET:
                    continue
                units, makespan = _split_units(plan, table_tiles)
                if max(len(u) for u in units) > MAX_UNITS_PER_CORE:
                    continue
                cycles = _estimated_cycles(plan, makespan)
                # Within 6 %, prefer more rows per unit (less K/V traffic, whose cost the model undercounts
                # when DRAM is near its limit); between equal rows, the fewer cycles (then larger key blocks).
                if best is None or cycles < 0.94 * best_cycles or (
                        cycles <= 1.06 * best_cycles and plan.rows > best.rows) or (
                        plan.rows == best.rows and (cycles, -bk) < (best_cycles, -best.bk)):
                    best, best_cycles = replace(plan, core_units=units), cycles
    if best is None:
        need, plan = smallest
        if need > HARDWARE_CB_BUDGET:
            raise L1BudgetError(
                f"flash attention needs {need} B of circular buffers per core for head_dim {head_dim} with "
                f"k_block_tiles={plan.bk}, q_block_tiles={plan.bq} and heads_per_unit={plan.hpu}, but a core has "
                f"{HARDWARE_CB_BUDGET} B; lower k_block_tiles (key tiles per K/V block) or q_block_tiles / "
                "heads_per_unit (query rows per unit)")
        raise FlashAttentionError(
            f"the work split needs more than {MAX_UNITS_PER_CORE} units on a core (runtime-arg limit); "
            "raise q_block_tiles or max_cores")
    return best


# ------------------------------------------------------------------------------------------ programs


def _core_set(cores: list[CoreCoord]) -> CoreRangeSet:
    return CoreRangeSet.of(cores)


def flash_attention_program(device, q: DeviceTensor, cache: KVCache, page_table: DeviceTensor, out: DeviceTensor,
                            *, p0: int, sq: int, gate: DeviceTensor | None = None, scale: float | None = None,
                            config: FlashAttentionConfig | None = None, plan: AttentionPlan | None = None) -> Program:
    """The attention program over device tensors.

    q, out (and gate): [Hq, rows, head_dim] bf16 with rows = plan.q_rows_per_head (Sq padded to whole
    query blocks; rows past Sq are ignored on input and garbage on output). The chunk's own K/V must
    already be in the cache (kv_cache_write_program). page_table: upload_page_table's tensor.
    """
    hq, rows, d = q.shape
    table_entries = page_table.shape[0] * page_table.shape[1]
    if plan is None:
        plan = plan_attention(hq, cache.kv_heads, d, sq, p0, cache.data_format, gate is not None, config,
                              table_entries)
    if d != cache.head_dim:
        raise ShapeError(f"q has head_dim {d} but the cache holds head_dim {cache.head_dim}")
    if rows != plan.q_rows_per_head:
        raise ShapeError(f"q has {rows} rows per head; this plan needs {plan.q_rows_per_head} "
                         f"(Sq={sq} padded to query blocks of {plan.bq * TILE} rows)")
    for name, t in (("out", out), ("gate", gate)):
        if t is not None and tuple(t.shape) != tuple(q.shape):
            raise ShapeError(f"{name} has shape {t.shape}; it must match q {q.shape}")
    for name, t in (("q", q), ("out", out), ("gate", gate)):
        if t is not None and t.data_format != DataFormat.Float16_b:
            raise ShapeError(f"{name} must be bf16 (Float16_b), got {t.data_format.name}")
    if p0 + sq > table_entries * cache.page_tokens:
        raise PageTableError(f"the page table tensor holds {table_entries} entries, too few for {p0 + sq} tokens")

    scale = plan.head_dim ** -0.5 if scale is None else float(scale)
    if not scale > 0:
        raise ShapeError(f"scale={scale}: the softmax scale must be positive")
    scale_bf16 = int(bf16_bits(np.array([scale], np.float32))[0])
    table_tiles = page_table.num_pages
    cores = plan.cores
    core_set = _core_set(cores)
    cbs = [CircularBuffer(i, fmt, fmt.tile_bytes, pages, core_set) for i, fmt, pages in plan.circular_buffers(table_tiles)]

    gate_args = gate.accessor_args() if gate is not None else out.accessor_args()
    reader = Kernel(KERNELS / "reader.cpp", Role.RISCV_1, core_set,
                    [plan.dt, plan.bk, plan.group, plan.hpu, cache.page_tiles, cache.kv_heads, table_tiles]
                    + q.accessor_args() + cache.k_pool.accessor_args() + cache.v_pool.accessor_args()
                    + page_table.accessor_args())
    guard = np.array([np.exp(plan.config.lazy_rescale_nats)], np.float32).view(np.uint32)[0]
    compute = Kernel(KERNELS / "compute.cpp", Role.COMPUTE, core_set,
                     [plan.dt, plan.bk, plan.hpu, scale_bf16, int(gate is not None), int(guard)],
                     compute_config=replace(plan.config.compute_config(),
                                            unpack_to_dest_fp32=float32_cbs(cbs, COPY_ONLY_FP32_CBS)))
    writer = Kernel(KERNELS / "writer.cpp", Role.RISCV_0, core_set,
                    [plan.dt, plan.hpu, int(gate is not None)] + out.accessor_args() + gate_args)
    for core, units in zip(cores, plan.core_units):
        units = list(units)
        reader.runtime_args[core] = [q.address, cache.k_pool.address, cache.v_pool.address, page_table.address,
                                     p0, sq, rows // TILE, plan.bq, len(units)] + units
        compute.runtime_args[core] = [p0, sq, plan.bq, plan.rt, plan.ct_s, plan.ct_o, len(units)] + units
        writer.runtime_args[core] = [out.address, gate.address if gate is not None else 0, rows // TILE, plan.bq,
                                     plan.rt, plan.ct_o, len(units)] + units
    inputs = {"q": q, "k_pool": cache.k_pool, "v_pool": cache.v_pool, "page_table": page_table}
    if gate is not None:
        inputs["gate"] = gate
    return Program(kernels=[reader, compute, writer], circular_buffers=cbs, inputs=inputs, outputs={"out": out},
                   name=f"flash_attention[hq={hq},hkv={cache.kv_heads},d={d},sq={sq},p0={p0}]")


def kv_cache_write_program(device, cache: KVCache, k_new: DeviceTensor, v_new: DeviceTensor,
                           page_table: DeviceTensor, *, p0: int, max_cores: int = MAX_CORES) -> Program:
    """Writes a chunk's K and V into its cache pages.

    k_new, v_new: [kv_heads, rows, head_dim] bf16 whose row r is the token at position (p0 // 32) * 32 + r
    (aligned_chunk_kv builds them); rows before p0 % 32 are placeholders: the prefix rows already in the
    cache are kept.
    """
    hkv, rows, d = k_new.shape
    if tuple(v_new.shape) != tuple(k_new.shape):
        raise ShapeError(f"k_new {k_new.shape} and v_new {v_new.shape} must have the same shape")
    if hkv != cache.kv_heads or d != cache.head_dim:
        raise ShapeError(f"new K/V are [{hkv}, {rows}, {d}] but the cache holds {cache.kv_heads} kv heads of "
                         f"head_dim {cache.head_dim}")
    if rows % TILE:
        raise ShapeError(f"new K/V rows ({rows}) must be a multiple of 32; use aligned_chunk_kv")
    dt = d // TILE
    tile_rows = rows // TILE
    end_tokens = (p0 // TILE + tile_rows) * TILE
    table_entries = page_table.shape[0] * page_table.shape[1]
    if _ceil_div(end_tokens, cache.page_tokens) > table_entries:
        raise PageTableError(f"the page table tensor holds {table_entries} entries, too few for {end_tokens} tokens")
    items = hkv * tile_rows
    n_cores = min(max_cores, items)
    per_core = [items // n_cores + (1 if i < items % n_cores else 0) for i in range(n_cores)]
    cores = [CoreCoord(i % 8, i // 8) for i in range(n_cores)]
    core_set = _core_set(cores)
    table_tiles = page_table.num_pages
    cbs = [
        CircularBuffer(CB_KV_NEW, DataFormat.Float16_b, DataFormat.Float16_b.tile_bytes, 2 * dt, core_set),
        CircularBuffer(CB_KV_KEEP, cache.data_format, cache.data_format.tile_bytes, 1, core_set),
        CircularBuffer(CB_KV_PAGE, cache.data_format, cache.data_format.tile_bytes, 2 * dt, core_set),
        CircularBuffer(CB_TABLE, DataFormat.UInt32, DataFormat.UInt32.tile_bytes, table_tiles, core_set),
    ]
    reader = Kernel(KERNELS / "kv_write_reader.cpp", Role.RISCV_1, core_set,
                    [dt] + k_new.accessor_args() + v_new.accessor_args())
    compute = Kernel(KERNELS / "kv_write_compute.cpp", Role.COMPUTE, core_set,
                     compute_config=ComputeConfig(MathFidelity.HiFi4, fp32_dest_acc_en=True))
    writer = Kernel(KERNELS / "kv_write_writer.cpp", Role.RISCV_0, core_set,
                    [dt, cache.page_tiles, cache.kv_heads, table_tiles] + cache.k_pool.accessor_args()
                    + cache.v_pool.accessor_args() + page_table.accessor_args())
    first = 0
    for core, count in zip(cores, per_core):
        reader.runtime_args[core] = [k_new.address, v_new.address, first, count]
        compute.runtime_args[core] = [2 * dt * count]
        writer.runtime_args[core] = [cache.k_pool.address, cache.v_pool.address, page_table.address, p0 // TILE,
                                     p0 % TILE, tile_rows, first, count]
        first += count
    return Program(kernels=[reader, compute, writer], circular_buffers=cbs,
                   inputs={"k_new": k_new, "v_new": v_new, "page_table": page_table},
                   outputs={"k_pool": cache.k_pool, "v_pool": cache.v_pool},
                   name=f"kv_cache_write[hkv={hkv},d={d},rows={rows},p0={p0}]")


# ------------------------------------------------------------------------------------------ host side


def heads_major(x: np.ndarray, rows: int) -> np.ndarray:
    """[S, H, D] -> [H, rows, D], zero rows after S."""
    s, h, d = x.shape
    out = np.zeros((h, rows, d), np.float32)
    out[:, :s] = np.asarray(x, np.float32).transpose(1, 0, 2)
    return out


def aligned_chunk_kv(x: np.ndarray, p0: int) -> np.ndarray:
    """[Sq, Hkv, D] -> [Hkv, rows, D] whose row r is position (p0 // 32) * 32 + r (zeros elsewhere)."""
    s = x.shape[0]
    shift = p0 % TILE
    rows = _ceil_div(shift + s, TILE) * TILE
    out = np.zeros((x.shape[1], rows, x.shape[2]), np.float32)
    out[:, shift:shift + s] = np.asarray(x, np.float32).transpose(1, 0, 2)
    return out


def _check_inputs(q, k_new, v_new, cache: KVCache, gate) -> tuple[int, int, int, int]:
    q, k_new, v_new = (np.asarray(x) for x in (q, k_new, v_new))
    if q.ndim != 3 or k_new.ndim != 3 or v_new.ndim != 3:
        raise ShapeError(f"q, k_new, v_new must be [S, heads, head_dim]; got {q.shape}, {k_new.shape}, {v_new.shape}")
    sq, hq, d = q.shape
    if k_new.shape != v_new.shape:
        raise ShapeError(f"k_new {k_new.shape} and v_new {v_new.shape} must have the same shape")
    if k_new.shape[0] != sq:
        raise ShapeError(f"k_new has {k_new.shape[0]} tokens but q has {sq}: the chunk's K/V are its own tokens'")
    hkv = k_new.shape[1]
    if hq % hkv:
        raise HeadCountError(f"query heads ({hq}) must be a multiple of kv heads ({hkv}) for grouped-query attention")
    if d not in SUPPORTED_HEAD_DIMS:
        raise HeadDimError(f"head_dim={d} is not supported; use one of {SUPPORTED_HEAD_DIMS}")
    if k_new.shape[2] != d:
        raise ShapeError(f"k_new/v_new have head_dim {k_new.shape[2]} but q has {d}")
    if hkv != cache.kv_heads or d != cache.head_dim:
        raise ShapeError(f"the chunk has {hkv} kv heads of head_dim {d} but the cache holds {cache.kv_heads} of "
                         f"{cache.head_dim}")
    if gate is not None and np.asarray(gate).shape != q.shape:
        raise ShapeError(f"gate has shape {np.asarray(gate).shape}; it must match q {q.shape}")
    return sq, hq, hkv, d


def write_kv_cache(device, cache: KVCache, k_new, v_new, page_table, p0: int, *,
                   table_tensor: DeviceTensor | None = None, max_cores: int = MAX_CORES):
    """Writes K/V [S, Hkv, D] of tokens [p0, p0 + S) into their cache pages; returns the run report."""
    k_new, v_new = np.asarray(k_new), np.asarray(v_new)
    if k_new.ndim != 3 or k_new.shape != v_new.shape:
        raise ShapeError(f"k_new {k_new.shape} and v_new {v_new.shape} must both be [S, kv_heads, head_dim]")
    if k_new.shape[1] != cache.kv_heads or k_new.shape[2] != cache.head_dim:
        raise ShapeError(f"K/V have {k_new.shape[1]} kv heads of head_dim {k_new.shape[2]} but the cache holds "
                         f"{cache.kv_heads} of {cache.head_dim}")
    if p0 < 0:
        raise ShapeError(f"p0={p0}: the first position cannot be negative")
    check_page_table(cache, page_table, p0 + k_new.shape[0])
    temps = []
    try:
        if table_tensor is None:
            table_tensor = upload_page_table(device, page_table)
            temps.append(table_tensor)
        k_t = device.upload(aligned_chunk_kv(k_new, p0), DataFormat.Float16_b)
        temps.append(k_t)
        v_t = device.upload(aligned_chunk_kv(v_new, p0), DataFormat.Float16_b)
        temps.append(v_t)
        return device.run(kv_cache_write_program(device, cache, k_t, v_t, table_tensor, p0=p0, max_cores=max_cores))
    finally:
        for t in temps:
            device.free(t)


@dataclass
class AttentionRun:
    """What flash_attention ran: the output and the two programs' reports."""

    out: np.ndarray
    write_report: object
    attention_report: object
    plan: AttentionPlan


def flash_attention(device, q, k_new, v_new, cache: KVCache, page_table, p0: int, *, gate=None,
                    scale: float | None = None, config: FlashAttentionConfig | None = None,
                    return_run: bool = False):
    """Causal attention of a chunk q [Sq, Hq, D] at positions [p0, p0 + Sq) over the cache's first p0
    tokens plus the chunk's own k_new / v_new [Sq, Hkv, D], which are written into the cache first.

    page_table: physical page per logical block of cache.page_tokens tokens, covering p0 + Sq tokens.
    gate [Sq, Hq, D] (optional): returns out * sigmoid(gate). Returns o [Sq, Hq, D] float32 (or an
    AttentionRun with the reports when return_run).
    """
    sq, hq, hkv, d = _check_inputs(q, k_new, v_new, cache, gate)
    check_page_table(cache, page_table, p0 + sq)
    if p0 < 0:
        raise ShapeError(f"p0={p0}: the chunk's first position cannot be negative")
    plan = plan_attention(hq, hkv, d, sq, p0, cache.data_format, gate is not None, config, len(list(page_table)))

    temps: list[DeviceTensor] = []
    try:
        table_t = upload_page_table(device, page_table)
        temps.append(table_t)
        write_report = write_kv_cache(device, cache, k_new, v_new, page_table, p0, table_tensor=table_t,
                                      max_cores=plan.config.max_cores)
        rows = plan.q_rows_per_head
        q_t = device.upload(heads_major(q, rows), DataFormat.Float16_b)
        temps.append(q_t)
        gate_t = None
        if gate is not None:
            gate_t = device.upload(heads_major(gate, rows), DataFormat.Float16_b)
            temps.append(gate_t)
        out_t = device.allocate((hq, rows, d), DataFormat.Float16_b)
        temps.append(out_t)
        program = flash_attention_program(device, q_t, cache, table_t, out_t, p0=p0, sq=sq, gate=gate_t, scale=scale,
                                          plan=plan)
        attention_report = device.run(program)
        out = device.download(out_t)[:, :sq].transpose(1, 0, 2).copy()
    finally:
        for t in temps:
            device.free(t)
    if return_run:
        return AttentionRun(out, write_report, attention_report, plan)
    return out


# ------------------------------------------------------------------------------------------ bench


def attention_flops(q_heads: int, head_dim: int, sq: int, p0: int) -> float:
    """Useful FLOPs of causal attention for queries at [p0, p0 + sq): 4 * D per visible (query, key) pair."""
    pairs = sq * p0 + sq * (sq + 1) // 2
    return 4.0 * head_dim * q_heads * pairs


def _arg(args, name, default):
    value = getattr(args, name, None)
    return default if value is None else value


def attention_bench(args) -> dict:
    """`ttprefill bench attention`: prefill `seq` tokens (the first `prefix` already in the cache) in
    chunks of `chunk` (default: the rest at once) on the simulator and report wall time, accuracy
    against the fp64 reference (small shapes) and the modeled figures summed over every program run
    (the cache writes and the attention programs).

    args: seq, q_heads, kv_heads, head_dim, and optionally chunk, prefix, page_tokens (64),
    format ("bf16" | "bfp8": the cache pages), fidelity ("HiFi2" | "HiFi4"), check ("auto" | "yes" | "no":
    run the numerics and compare; auto for up to ~2^31 score elements x head_dim), timing_only, trace
    (path for a Chrome trace of the last attention program).
    """
    from ttprefill.device.sim_device import DEFAULT_COST_SETTING, SimDevice
    from ttprefill.reference.attention import causal_attention
    from ttprefill.reference.metrics import pcc, rel_rms
    from ttprefill.timing import utilisation

    seq, hq, hkv, d = int(args.seq), int(args.q_heads), int(args.kv_heads), int(args.head_dim)
    prefix = int(_arg(args, "prefix", 0))
    chunk = int(_arg(args, "chunk", 0)) or (seq - prefix)
    page_tokens = int(_arg(args, "page_tokens", 64))
    page_format = DataFormat.Bfp8_b if str(_arg(args, "format", "bf16")).lower().startswith("bfp8") \
        else DataFormat.Float16_b
    fidelity = MathFidelity[str(_arg(args, "fidelity", "HiFi2"))]
    if not 0 <= prefix < seq:
        raise ValueError(f"--prefix {prefix} must be in [0, --seq {seq})")
    check = str(_arg(args, "check", "auto"))
    pairs = hq * (seq * (seq + 1) // 2 - prefix * (prefix + 1) // 2)
    numerics = check == "yes" or (check == "auto" and pairs * d <= 2 ** 31)
    if bool(_arg(args, "timing_only", False)) and check != "yes":
        numerics = False
    trace_path = _arg(args, "trace", None)

    rng = np.random.default_rng(0)
    if numerics:
        q_all, k_all, v_all = (rng.standard_normal((seq, h, d)).astype(np.float32) for h in (hq, hkv, hkv))
    else:  # timing only: values do not matter, and zeros cost no host memory (np.zeros maps lazily)
        q_all, k_all, v_all = (np.zeros((seq, h, d), np.float32) for h in (hq, hkv, hkv))
    device = SimDevice(timing_only=not numerics, trace=bool(trace_path), costs=_arg(args, "costs", None) or DEFAULT_COST_SETTING)
    pages = _ceil_div(seq, page_tokens)
    cache = KVCache.create(device, pages, page_tokens, hkv, d, page_format)
    table = list(range(pages))
    config = FlashAttentionConfig(math_fidelity=fidelity)
    if prefix:  # the prefix is in the cache before the measured chunks (written, not measured)
        write_kv_cache(device, cache, k_all[:prefix], v_all[:prefix], table, 0)
    t0 = time.perf_counter()
    cycles, counters, outs, cores, last = 0, {}, [], 1, None
    attention_cycles = write_cycles = 0
    for start in range(prefix, seq, chunk):
        stop = min(seq, start + chunk)
        run = flash_attention(device, q_all[start:stop], k_all[start:stop], v_all[start:stop], cache, table, start,
                              config=config, return_run=True)
        attention_cycles += run.attention_report.cycles
        write_cycles += run.write_report.cycles
        for report in (run.write_report, run.attention_report):
            cycles += report.cycles
            for key, value in report.counters.items():  # programs run back to back: counters add up
                if isinstance(value, (int, float)):
                    counters[key] = counters.get(key, 0) + value
        cores = max(cores, len(run.plan.core_units))
        outs.append(run.out)
        last = run.attention_report
    wall = time.perf_counter() - t0
    cache.free()
    if trace_path and last is not None:
        from ttprefill.device.trace import write_chrome_trace

        write_chrome_trace(last, trace_path)

    flops = attention_flops(hq, d, seq - prefix, prefix)
    total = type("ModeledRuns", (), {"cycles": cycles, "counters": counters})()
    figures = utilisation(total, flops=flops, cores=MAX_CORES, fidelity=fidelity)
    result = {
        "shape": {"seq": seq, "q_heads": hq, "kv_heads": hkv, "head_dim": d, "chunk": chunk, "prefix": prefix,
                  "page_tokens": page_tokens, "format": page_format.name, "fidelity": fidelity.name},
        "wall_s": wall,
        "modeled_cycles": int(cycles),
        "modeled_s": figures["modeled_s"],
        # The two programs apart: the attention itself, and writing the chunk's K/V into the cache pages.
        "attention_modeled_s": attention_cycles / 1e9,
        "cache_write_modeled_s": write_cycles / 1e9,
        "tflops": figures["tflops"],
        "fpu_util": figures["fpu_util"],
        "dram_util": figures["dram_util"],
        "sfpu_util": figures["sfpu_util"],
        "noc_util": figures["noc_util"],
        "pipeline_busy": figures["pipeline_busy"],
        "cores": cores,
        "numerics": numerics,
    }
    if numerics:
        ref = causal_attention(q_all[prefix:], k_all, v_all, prefix)
        out = np.concatenate(outs, axis=0)
        result["pcc"] = pcc(ref, out)
        result["rel_rms"] = rel_rms(ref, out)
    return result


# ------------------------------------------------------------------------------------------ registry


def _registered(hq: int, hkv: int, d: int, sq: int, p0: int, page_format: DataFormat, gated: bool = False) -> Program:
    device = build_device()
    page_tokens = 64
    pages = _ceil_div(p0 + sq, page_tokens) + 1
    cache = KVCache.create(device, pages, page_tokens, hkv, d, page_format)
    table = device.allocate(page_table_tensor_shape(pages), DataFormat.UInt32)
    plan = plan_attention(hq, hkv, d, sq, p0, page_format, gated, table_entries=pages)
    rows = plan.q_rows_per_head
    q = device.allocate((hq, rows, d), DataFormat.Float16_b)
    out = device.allocate((hq, rows, d), DataFormat.Float16_b)
    gate = device.allocate((hq, rows, d), DataFormat.Float16_b) if gated else None
    return flash_attention_program(device, q, cache, table, out, p0=p0, sq=sq, gate=gate, plan=plan)


def _registered_write(hkv: int, d: int, sq: int, p0: int, page_format: DataFormat) -> Program:
    device = build_device()
    page_tokens = 64
    pages = _ceil_div(p0 + sq, page_tokens) + 1
    cache = KVCache.create(device, pages, page_tokens, hkv, d, page_format)
    table = device.allocate(page_table_tensor_shape(pages), DataFormat.UInt32)
    rows = _ceil_div(p0 % TILE + sq, TILE) * TILE
    k = device.allocate((hkv, rows, d), DataFormat.Float16_b)
    v = device.allocate((hkv, rows, d), DataFormat.Float16_b)
    return kv_cache_write_program(device, cache, k, v, table, p0=p0)


@register("flash_attention/hq8_hkv2_d128_sq512_p0_1000_bf16")
def _fa_gqa_d128() -> Program:
    return _registered(8, 2, 128, 512, 1000, DataFormat.Float16_b)


@register("flash_attention/hq24_hkv4_d256_sq2048_bfp8_gated")
def _fa_qwen_d256() -> Program:
    return _registered(24, 4, 256, 2048, 0, DataFormat.Bfp8_b, gated=True)


@register("flash_attention/hq1_hkv1_d64_sq100_p0_64")
def _fa_small_d64() -> Program:
    return _registered(1, 1, 64, 100, 64, DataFormat.Float16_b)


@register("flash_attention/kv_cache_write_hkv4_d256_sq100_p0_1000_bfp8")
def _kv_write_bfp8() -> Program:
    return _registered_write(4, 256, 100, 1000, DataFormat.Bfp8_b)
