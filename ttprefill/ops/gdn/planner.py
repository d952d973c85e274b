"""How the GDN programs split their work over the cores: unit lists per core, the sequential
pass's value block, the fused scan's helper cores, the conv's units, and which checkpoints the device
writes. Pure arithmetic on shapes: no device, no tensors."""

from __future__ import annotations

from dataclasses import dataclass

# core_list and split_units are the device's work split, re-exported as part of the GDN planner's API
from ttprefill.device.program import DataFormat, core_list, split_units  # noqa: F401
from ttprefill.hw import DRAM_PEAK_BYTES_PER_CYCLE, MAX_CORES, MAX_RUNTIME_ARGS, MAX_SEMAPHORES

from .shapes import BF16, FP32, TILE, GdnCheckpointError, GdnDims, ScanShape


# Rough per-chunk costs for choosing the sequential pass's value block (cycles; WORMHOLE.md rates):
# compute per value tile ~ 3 matmul passes over the key tiles with fp32 unpacks, and DRAM at the
# chip's peak (hw.DRAM_PEAK_BYTES_PER_CYCLE) shared by all cores.
_SEQ_CYCLES_PER_VALUE_TILE_AND_KEY_TILE = 3 * 2 * 128


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
        cost = max(compute, units * per_unit / DRAM_PEAK_BYTES_PER_CYCLE)
        if best_cost is None or cost < best_cost:
            best, best_cost = block, cost
    return best


# Helper cores of the fused scan (kernels/gdn/scan_offload.h): at most this many value heads per helper,
# and the modeled cycles of one (head, chunk) of the 27B shape (K = V = 128, C = 64) the offloaded
# fraction is balanced on: a helper's preparation of a record (decay, A, the inverse with its waits
# unfilled, P, the scaled T; k k^T and q k^T formed once per q/k group) and a head core's own part of a
# chunk (k h, K~^T, q~, Vnew, O, the state update), from RunReport.zones of the fused scan in timing-only
# runs (HiFi3, timing model 2.2 at its central setting: elapsed per zone entry, summed over the zones,
# prep.* ~25.5k and seq.* ~20.9k a chunk at 8k tokens). The fraction they give stays 29/64; a sweep at 8k
# tokens under 2.2 found 31/64 about 2 % faster (the sweep is in the commit that set these figures).
MAX_HEADS_PER_HELPER = 3
RECORD_SLOTS = 2
_PREP_CYCLES_PER_CHUNK = 25_500
_SEQ_CYCLES_PER_CHUNK = 20_900
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




# The pipelined scan (scan_pipelined_program): the two-program form's preparation and sequential pass as
# one program on disjoint cores, each value head's records prepared by `producers` cores of its own (chunk
# c by the (c % producers)-th) while its sequential cores run; a sequential core counts each producer's
# records on a semaphore of its own, so at most this many producers per head.
MAX_PREP_CORES_PER_HEAD = 8
# Record slots in a sequential core's L1 (kernels/gdn/scan_pipeline.h): 3 lets a preparing core deliver a
# chunk's record while the sequential core still works on the two before it. A choice, measured (modeled,
# 9B per chip on 2 chips, 2048 tokens, one write per core): 2 slots 481k cycles, 3 slots 462k.
PIPELINE_RECORD_SLOTS = 3
# A preparing core keeps a free count and a slot-address word per record slot for each sequential core of
# its head in its semaphores (scan_pipeline.h), so it serves at most this many.
MAX_SEQ_CORES_PER_HEAD = MAX_SEMAPHORES // (1 + PIPELINE_RECORD_SLOTS)
# A head's preparation of one chunk costs about as much as its sequential part of it (_PREP_CYCLES_PER_CHUNK
# against _SEQ_CYCLES_PER_CHUNK), so with one preparing core per head the sequential cores wait on it:
# modeled at 2048 tokens, 32 heads (one each) 0.97M cycles against the fused scan's 0.80M, while 16 heads
# (two each) take 0.62M against 0.75M fused and 0.68M in two programs.
MIN_PREP_CORES_PER_HEAD = 2


@dataclass(frozen=True)
class PipelinePlan:
    """Value tiles per sequential unit (one unit per core) and preparing cores per value head."""

    block: int
    producers: int


def pipeline_plan(shape: ScanShape, max_cores: int = MAX_CORES) -> PipelinePlan | None:
    """The pipelined scan's split, or None when the grid cannot give every value head's sequential units
    a core each and the head MIN_PREP_CORES_PER_HEAD preparing cores. Per chunk the sequential cores take the value
    block's modeled compute (or everyone's DRAM reads: the records go from core to core, not through DRAM)
    and a head's producers prepare one chunk in _PREP_CYCLES_PER_CHUNK / producers; the block whose slower
    side is fastest wins, ties to the wider block."""
    s, vt, nt, kt = shape, shape.value_tiles, shape.chunk_tiles, shape.key_tiles
    vectors = s.vector_tiles * 2 * 64  # gate-vector rows, two 64-byte face rows a tile
    best, best_cost = None, None
    for block in sorted((b for b in range(1, vt + 1) if vt % b == 0), reverse=True):
        if vt // block > MAX_SEQ_CORES_PER_HEAD:
            continue
        units = s.v_heads * (vt // block)
        producers = min(MAX_PREP_CORES_PER_HEAD, (max_cores - units) // s.v_heads)
        if producers < MIN_PREP_CORES_PER_HEAD:
            continue
        compute = block * nt * kt * _SEQ_CYCLES_PER_VALUE_TILE_AND_KEY_TILE
        seq_reads = (2 * nt * kt + nt * block) * BF16.tile_bytes + vectors   # k, q, v block, vectors
        prep_reads = 2 * nt * kt * BF16.tile_bytes + vectors                 # k, q, vectors
        dram = (units * seq_reads + s.v_heads * prep_reads) / DRAM_PEAK_BYTES_PER_CYCLE
        cost = max(compute, dram, _PREP_CYCLES_PER_CHUNK / producers)
        if best_cost is None or cost < best_cost:
            best, best_cost = PipelinePlan(block, producers), cost
    return best


def fused_scan_by_default(shape: ScanShape, max_cores: int = MAX_CORES) -> bool:
    """Whether the scan runs as one fused program (scan_fused_program) unless told otherwise. The fused
    form saves the chunk records' DRAM round trip but runs one value head per core (plus its helpers),
    so it is chosen when the value heads fill at least a quarter of the cores; with fewer heads the two
    programs spread the preparation over (head, chunk) and the sequential part over value blocks.
    Measured (modeled, 4k tokens, gate vectors + scan): 24 heads V=128 fused 0.95M cycles vs 1.51M;
    16 heads V=256 1.68M vs 1.72M; 12 heads V=128 0.94M vs 0.80M; 8 heads V=256 1.67M vs 0.89M."""
    return 4 * shape.v_heads >= max_cores



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


# Norm modes of a conv unit (kernels/gdn/conv_consts.h).
CONV_NORM_NONE, CONV_NORM_L2, CONV_NORM_L2_SCALED = 0, 1, 2


def conv_value_width(dims: GdnDims, max_cores: int = MAX_CORES) -> int:
    """Value channel tiles per conv unit: single tiles spread few heads over the cores; with many
    heads a whole head per unit keeps the per-core unit lists (runtime args) short."""
    single = 2 * dims.qk_heads + dims.v_heads * dims.value_tiles
    return 1 if single <= 4 * max_cores else dims.value_tiles


# Conv work units a core gets on average. Several units per core let balance_units mix q/k heads (whose
# L2 norm adds work per token tile) with value tiles on every core instead of giving whole cores to one
# kind; each unit costs one read of its tap weights and of the token tile before its range. 4, 6 and 8
# were compared (modeled, 2048 tokens): the same within 0.3 % at the 9B shapes (8/16 and 16/32 heads), 6
# best at 27B's per-chip shape on 8 chips (2/6 heads: 188k, 182k, 202k cycles).
CONV_UNITS_PER_CORE = 6


def conv_units(dims: GdnDims, tokens: int, max_cores: int = MAX_CORES) -> list[tuple[int, int, int, int, int]]:
    """Conv work units (first channel tile, width, first token tile, end token tile, norm mode): every q
    and k head as one group of key tiles (normalised together), value tiles alone or by head
    (conv_value_width), each split into token ranges of about the same number of tiles (width x token
    tiles) for every group, CONV_UNITS_PER_CORE units per core on average: small enough for the
    largest-first balance on conv_unit_cost to share the q/k heads' norms out over all the cores."""
    kt, h, vw = dims.key_tiles, dims.qk_heads, conv_value_width(dims, max_cores)
    groups = [(i * kt, kt, CONV_NORM_L2_SCALED) for i in range(h)]
    groups += [((h + i) * kt, kt, CONV_NORM_L2) for i in range(h)]
    groups += [(2 * h * kt + j * vw, vw, CONV_NORM_NONE) for j in range(dims.v_heads * dims.value_tiles // vw)]
    token_tiles = -(-tokens // TILE)
    unit_tiles = max(1.0, token_tiles * sum(g[1] for g in groups) / (CONV_UNITS_PER_CORE * max_cores))
    units = []
    for col0, width, mode in groups:
        ranges = max(1, min(token_tiles, round(width * token_tiles / unit_tiles)))
        bounds = [token_tiles * r // ranges for r in range(ranges + 1)]
        units += [(col0, width, bounds[r], bounds[r + 1], mode) for r in range(ranges) if bounds[r + 1] > bounds[r]]
    return units


# What the L2 norm of a q/k head adds per token tile, in conv tiles (one tile's conv + SiLU): modeled
# per-unit runs of the conv program on one core (K = 128, timing-only, timing model 2.4) put a tile's
# conv at 3.16k cycles and a head's norm at 3.6-3.7k a token tile, 1.15-1.19 tiles, at the central
# setting; 1.0 at low, 1.28 at high. An estimate with that range.
CONV_NORM_TILES = 1.2


def conv_unit_cost(unit: tuple[int, int, int, int, int]) -> float:
    """A conv unit's modeled work in conv tiles: its tiles plus, for a q/k head, the norm per token tile."""
    _, width, first, end, mode = unit
    return (end - first) * (width + (CONV_NORM_TILES if mode != CONV_NORM_NONE else 0.0))


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
