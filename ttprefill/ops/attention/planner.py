"""plan_attention: block sizes and the work split of one attention program, from a small cost model."""

from __future__ import annotations

import heapq
from itertools import product
from dataclasses import dataclass, field, replace

from ttprefill.device.program import CoreCoord, DataFormat, cb_aligned
from ttprefill.hw import (
    DRAM_PLANNING_BYTES_PER_CYCLE,
    L1_CB_BUDGET_BYTES,
    MAX_CORES,
    UNPACK_BYTES_PER_CYCLE,
    UNPACR_SETUP_CYCLES,
)

from .shapes import (
    CB_ALPHA,
    CB_BMAX,
    CB_GATE,
    CB_K,
    CB_L,
    CB_L_INV,
    CB_L_NEW,
    CB_M,
    CB_MASK,
    CB_M_NEW,
    CB_O,
    CB_ONES,
    CB_OUT,
    CB_O_TMP,
    CB_P,
    CB_PSUM,
    CB_Q,
    CB_S,
    CB_SHIFT,
    CB_SPREAD,
    CB_TABLE,
    CB_V,
    DEFAULT_K_BLOCK_TILES,
    KV_SHARE_CHOICES,
    MAX_LAZY_RESCALE_NATS,
    MAX_UNITS_PER_CORE,
    NUM_MASK_TILES,
    SUPPORTED_HEAD_DIMS,
    TILE,
    FlashAttentionConfig,
    FlashAttentionError,
    HeadCountError,
    HeadDimError,
    L1BudgetError,
    ShapeError,
)


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
# A K/V sharing group's sender reads each block from DRAM and then multicasts it, so a block reaches the
# group this long after a slot frees: measured on the simulator (timing model 2.4, central) as the
# receivers' wait, ~28.7k cycles for a 256 KiB block (bf16, 8 key tiles at d 256) under 64 cores' load.
# An estimate elsewhere; with fewer rows per unit than that covers, the group waits for its reader.
_SHARED_BLOCK_BYTES_PER_CYCLE = 9.1
# What the cost model expects of DRAM under every core's load (an estimate; ttprefill.hw says why).
_DRAM_BYTES_PER_CYCLE = DRAM_PLANNING_BYTES_PER_CYCLE


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
    row_block: int = 2  # query tile-rows per matmul block asked for (1 or 2; 1 when rows is odd)
    kv_share: int = 1  # cores of a K/V sharing group (kernels/flash_attention/kv_share.h)
    core_units: tuple[tuple[int, ...], ...] = field(default=())  # packed units per core
    # Per core, per unit: the key tiles the reader streams (the unit's own, or its sharing group's most).
    core_streamed: tuple[tuple[int, ...], ...] = field(default=())

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
        return self.row_block if self.rows % self.row_block == 0 else 1

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

    def share_group(self, core_index: int) -> tuple[int, int]:
        """(first core index, cores) of the K/V sharing group of a core: consecutive cores of one grid row."""
        first = core_index - core_index % self.kv_share
        return first, min(self.kv_share, len(self.core_units) - first)

    def circular_buffers(self, table_tiles: int) -> list[tuple[int, DataFormat, int]]:
        """(index, format, pages) of every CB on a core. With room to spare in L1, cb_out grows to a whole
        unit's output (so the end of a unit never waits for the writer, whose DRAM writes queue behind
        the other cores' K/V reads), then Q is double-buffered (the next unit's Q loads while this one
        computes)."""
        others = self._cbs_without_q(table_tiles)
        q_tiles = self.rows * self.dt
        q_bytes = cb_aligned(q_tiles * DataFormat.Float16_b.tile_bytes)
        bf16 = DataFormat.Float16_b
        group_tiles = self.rt * self.dt
        small_out = 2 * group_tiles
        spare = L1_CB_BUDGET_BYTES - _cb_bytes(others) - q_bytes
        extra_groups = max(0, spare // (group_tiles * bf16.tile_bytes))
        out_tiles = min(self.rows * self.dt, small_out + extra_groups * group_tiles)
        others = [(i, f, out_tiles if i == CB_OUT else n) for i, f, n in others]
        buffers = 2 if _cb_bytes(others) + 2 * q_bytes <= L1_CB_BUDGET_BYTES else 1
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


def _cb_bytes(cbs) -> int:
    return sum(cb_aligned(fmt.tile_bytes * pages) for _, fmt, pages in cbs)


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


def _matmul_product_cycles(plan: AttentionPlan, ct: int) -> float:
    """One tile product of Q K^T or P V in an rt x ct block, as the timing model runs tt-llk's matmul: the
    bf16 row tiles (in0) are reused across the block, the K / V tiles (in1, the page format) stream through
    srcA one UNPACR each. With one row the unpacker keeps pace with the FPU or sets the pace; with two rows
    both srcB banks hold the row tiles until the block's last product, so each K step's row tiles and first
    K / V tile are unpacked while the FPU waits."""
    math = _MATMUL_CYCLES_PER_PHASE * plan.config.math_fidelity.phases
    streamed = plan.page_format.tile_bytes / UNPACK_BYTES_PER_CYCLE + UNPACR_SETUP_CYCLES
    reused = DataFormat.Float16_b.tile_bytes / UNPACK_BYTES_PER_CYCLE + UNPACR_SETUP_CYCLES
    if plan.rt == 1:
        return max(math, streamed + reused / ct)
    exposed = max(0.0, 2 * reused + streamed - math)
    return max(math, streamed / 2) + exposed / (2 * ct)


def _unit_cycles(plan: AttentionPlan, q_block: int) -> float:
    """Modeled cycles of one unit, from the kernel's measured shape on the simulator: per score tile the
    two matmuls plus the softmax work, per row the first shift, the per-block state updates, the Q load
    and the final normalisation (the slow path is assumed rare)."""
    per_score_tile = plan.dt * (_matmul_product_cycles(plan, plan.ct_s) + _matmul_product_cycles(plan, plan.ct_o)) \
        + _SOFTMAX_CYCLES_PER_SCORE_TILE
    key_tiles = plan.unit_key_tiles(q_block)
    key_blocks = _ceil_div(key_tiles, plan.bk)
    seed = _SEED_CYCLES_PER_ROW + plan.dt * _SEED_CYCLES_PER_ROW_DIM_TILE
    compute = plan.rows * (key_tiles * per_score_tile + seed + key_blocks * _STEP_CYCLES + _ROW_CYCLES
                           + plan.dt * _ROW_CYCLES_PER_DIM_TILE)
    if plan.kv_share == 1:
        return compute
    # A shared block cannot arrive sooner than the sender's read and multicast after the slot frees.
    block_bytes = 2 * plan.bk * plan.dt * plan.page_format.tile_bytes
    return max(compute, key_blocks * block_bytes / _SHARED_BLOCK_BYTES_PER_CYCLE)


def _exposed_q_load_cycles(plan: AttentionPlan, table_tiles: int, n_cores: int) -> float:
    """A unit's Q load when L1 has no room for a second Q buffer: it no longer overlaps the previous unit,
    and it shares DRAM with every core's K/V reads, so it runs at about a core's share of the bandwidth
    (this is what makes a near-full-L1 plan slower than its compute alone suggests)."""
    q_tiles = plan.rows * plan.dt
    q_buffers = next(n for i, _, n in plan.circular_buffers(table_tiles) if i == CB_Q) // q_tiles
    if q_buffers >= 2:
        return 0.0
    return q_tiles * DataFormat.Float16_b.tile_bytes / (_DRAM_BYTES_PER_CYCLE / n_cores)


@dataclass(frozen=True)
class _Split:
    core_units: tuple[tuple[int, ...], ...]
    core_streamed: tuple[tuple[int, ...], ...]
    makespan: float  # modeled cycles of the busiest core
    key_tiles_read: int  # key tiles read from the cache pages (each K and V, all units)


def _split_units(plan: AttentionPlan, table_tiles: int = 1) -> _Split | None:
    """The units over the cores (None: this plan's K/V sharing cannot be arranged)."""
    if plan.kv_share > 1:
        return _shared_split(plan, table_tiles)
    n_cores = min(plan.config.max_cores, len(plan.units()))
    q_load = _exposed_q_load_cycles(plan, table_tiles, n_cores)
    costs = [(_unit_cycles(plan, b) + q_load, pack_unit(hg, b)) for hg, b in plan.units()]
    per_core = _lpt(costs, n_cores)
    loads = {packed: cost for cost, packed in costs}
    makespan = max(sum(loads[u] for u in units) for units in per_core)
    streamed = tuple(tuple(plan.unit_key_tiles(u & 0xFFFF) for u in units) for units in per_core)
    return _Split(tuple(tuple(u) for u in per_core), streamed, makespan,
                  sum(plan.unit_key_tiles(b) for _, b in plan.units()))


def _shared_split(plan: AttentionPlan, table_tiles: int) -> _Split | None:
    """K/V sharing groups of G = plan.kv_share cores: each kv head's units, in query-block order (neighbours
    see nearly the same keys), are cut into bundles of G; a bundle runs on one group, unit i on its core i,
    the sender's reads streaming the most keys any of them needs. Bundles go onto the groups longest first.
    None unless every kv head's units fill whole bundles and there is at least one group of G cores."""
    g = plan.kv_share
    n_groups = min(plan.config.max_cores, len(plan.units())) // g
    per_kv = (plan.group // plan.hpu) * plan.q_blocks
    if n_groups < 1 or per_kv % g:
        return None
    q_load = _exposed_q_load_cycles(plan, table_tiles, n_groups * g)
    heads_per_kv = plan.group // plan.hpu
    bundles = []
    for kv in range(plan.kv_heads):
        units = [(hg, b) for b in range(plan.q_blocks) for hg in range(kv * heads_per_kv, (kv + 1) * heads_per_kv)]
        for i in range(0, per_kv, g):
            bundle = units[i:i + g]
            streamed = max(plan.unit_key_tiles(b) for _, b in bundle)
            cost = max(_unit_cycles(plan, b) for _, b in bundle) + q_load
            bundles.append((cost, len(bundles), bundle, streamed))
    on_group = _lpt([(cost, index) for cost, index, _, _ in bundles], n_groups)
    core_units, core_streamed, makespan = [], [], 0.0
    for indices in on_group:
        makespan = max(makespan, sum(bundles[i][0] for i in indices))
        for member in range(g):
            core_units.append(tuple(pack_unit(*bundles[i][2][member]) for i in indices))
            core_streamed.append(tuple(bundles[i][3] for i in indices))
    return _Split(tuple(core_units), tuple(core_streamed), makespan, sum(b[3] for b in bundles))


def _estimated_cycles(plan: AttentionPlan, split: _Split) -> float:
    """The slower of the busiest core and the DRAM traffic (K/V read once per unit, or per sharing group)."""
    kv_bytes = split.key_tiles_read * 2 * plan.dt * plan.page_format.tile_bytes
    return max(split.makespan, kv_bytes / _DRAM_BYTES_PER_CYCLE)


def _divisors(n: int) -> list[int]:
    return [d for d in range(n, 0, -1) if n % d == 0]


def plan_attention(q_heads: int, kv_heads: int, head_dim: int, sq: int, p0: int, page_format: DataFormat,
                   gated: bool = False, config: FlashAttentionConfig | None = None,
                   table_entries: int = 1) -> AttentionPlan:
    """Checks the shape and picks block sizes and the work split (raises FlashAttentionError subclasses).

    Candidates: Bk in (16, 8, 4) key tiles, Bq in (16, 8, 4, 2, 1) query tile-rows and every divisor of
    the GQA group as heads per unit, 1 or 2 query tile-rows per matmul block, with at most MAX_UNIT_ROWS rows
    per unit, CBs within L1 and units within the runtime-arg limit; the one with the fewest modeled cycles wins.
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
    if config.kv_share_cores is not None and config.kv_share_cores not in KV_SHARE_CHOICES:
        raise FlashAttentionError(f"kv_share_cores={config.kv_share_cores}: use one of {KV_SHARE_CHOICES} "
                                  "(cores of one grid row sharing each K/V read)")
    if config.heads_per_unit is not None and group % config.heads_per_unit:
        raise FlashAttentionError(f"heads_per_unit={config.heads_per_unit} must divide the {group} query heads "
                                  "per kv head")
    table_tiles = _ceil_div(max(1, table_entries), TILE * TILE)
    q_tiles = _ceil_div(sq, TILE)

    bk_choices = [config.k_block_tiles] if config.k_block_tiles else [16, DEFAULT_K_BLOCK_TILES, 4]
    bq_choices = [config.q_block_tiles] if config.q_block_tiles else \
        [b for b in (16, 8, 4, 2, 1) if b <= q_tiles] or [1]
    hpu_choices = [config.heads_per_unit] if config.heads_per_unit else _divisors(group)
    share_choices = [config.kv_share_cores] if config.kv_share_cores else list(KV_SHARE_CHOICES)
    user_sized = config.q_block_tiles is not None or config.heads_per_unit is not None

    best, best_key, smallest = None, None, None
    for bk, bq, hpu, row_block, share in product(bk_choices, bq_choices, hpu_choices, (2, 1), share_choices):
        if not user_sized and hpu * bq > MAX_UNIT_ROWS:
            continue
        plan = AttentionPlan(q_heads, kv_heads, head_dim, sq, p0, DataFormat(page_format), gated, config,
                             bk, bq, hpu, row_block, share)
        if row_block == 2 and plan.rt == 1:
            continue  # the same plan as row_block 1
        need = plan.l1_bytes(table_tiles)
        if smallest is None or need < smallest[0]:
            smallest = (need, plan)
        if need > L1_CB_BUDGET_BYTES:
            continue
        split = _split_units(plan, table_tiles)
        if split is None or max(len(u) for u in split.core_units) > MAX_UNITS_PER_CORE:
            continue
        cycles = _estimated_cycles(plan, split)
        # The fewest modeled cycles, then the fewest K/V bytes read from DRAM (the cost model's DRAM term is a
        # hard bound; below it the reads still contend with every other core's), then larger key blocks.
        # (Under timing model 2.1 a plan within 6 % with more rows per unit was preferred; under 2.2
        # simulation says fewer rows win at 4k-32k.)
        key = (cycles, split.key_tiles_read, -bk)
        if best is None or key < best_key:
            best, best_key = replace(plan, core_units=split.core_units, core_streamed=split.core_streamed), key
    if best is None:
        need, plan = smallest
        if need > L1_CB_BUDGET_BYTES:
            raise L1BudgetError(
                f"flash attention needs {need} B of circular buffers per core for head_dim {head_dim} with "
                f"k_block_tiles={plan.bk}, q_block_tiles={plan.bq} and heads_per_unit={plan.hpu}, but a core has "
                f"{L1_CB_BUDGET_BYTES} B; lower k_block_tiles (key tiles per K/V block) or q_block_tiles / "
                "heads_per_unit (query rows per unit)")
        if config.kv_share_cores not in (None, 1):
            raise FlashAttentionError(
                f"kv_share_cores={config.kv_share_cores} cannot be arranged: each kv head's units must fill whole "
                "groups of that many cores and max_cores hold one; use a smaller kv_share_cores or leave it None")
        raise FlashAttentionError(
            f"the work split needs more than {MAX_UNITS_PER_CORE} units on a core (runtime-arg limit); "
            "raise q_block_tiles or max_cores")
    return best
