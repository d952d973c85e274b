"""Whether a model fits one device's DRAM, worked out before any weight is loaded.

On the device a prefill keeps three things in DRAM at once:
- the resident weights: every parameter but the token embedding (its lookup is a host gather of a few
  rows per chunk), each matrix tiled into 32x32 tiles of the chosen format; norm weights and the GDN
  per-head vectors stay bf16 (tiny, and they set the scale of everything after them);
- the prefix cache's device budget: attention K/V pages plus device-tier GDN checkpoints (one budget,
  `cache_budget_bytes`, that the cache itself enforces);
- one chunk's working set: the live GDN conv and recurrent states of every GDN layer, as the ping-pong pairs
  the device stack keeps (GdnDeviceState: the state a chunk reads and the one it writes; conv bf16, recurrent
  fp32), and the chunk's activations: its residual stream and the largest block's temporaries, with the
  tensor-parallel scheme's collective buffers on a mesh (activation_bytes);
- what the chunk's host transfers hold while they run beside the programs (device_stack.PendingReads and
  InputBuffer): every GDN layer's checkpoint tensors until the chunk's end (checkpoint_read_bytes) and the
  next chunk's embeddings in a second input buffer (input_buffer_bytes);
- the resident RoPE tables: fp32 cos and sin of the rotary dims for every position the K/V pages can hold;
- a request's resident page table: one UInt32 entry per K/V page it may name (every page of the pool at
  most), in 32x32 tiles of 4 KB interleaved over the DRAM banks, as ops/attention/page_table.py keeps it.

The plan reports each part in bytes and refuses, with the numbers and the ways out, when their sum
passes the chip's DRAM (hw.DRAM_BYTES_PER_CHIP). Sizes of the formats follow tt-metal's tile layouts:
bf16 2 bytes an element; bfp8_b a shared 8-bit exponent per 16 values, 1,088 bytes a 1,024-value tile; bfp4_b
the same exponents and a nibble a value, 576 bytes. Each projection's matrices take their role's format
(ops/linear/weight_formats.py: e.g. "bfp8,mlp_gate_up=bfp4").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ttprefill.device.program import DataFormat
from ttprefill.hw import DRAM_BANKS, DRAM_BYTES_PER_CHIP, TILE
from ttprefill.model.collective_dtype import DEFAULT as DEFAULT_COLLECTIVE_DTYPE
from ttprefill.model.collective_dtype import CollectiveDtype
from ttprefill.model.config import ModelConfig
from ttprefill.model.pipeline_split import PIPELINE, TENSOR, stage_layers
from ttprefill.model.tensor_parallel import DEFAULT_SCHEME, TensorParallelPlan
from ttprefill.model.weights import parameter_shapes
from ttprefill.ops.linear.weight_formats import FORMATS as WEIGHT_FORMAT_NAMES

# bytes of a 32 x 32 tile by the weight formats' names (bf16, bfp8, bfp4) and fp32, from the formats' one home
TILE_BYTES = {**{name: fmt.tile_bytes for name, fmt in WEIGHT_FORMAT_NAMES.items()},
              "fp32": DataFormat.Float32.tile_bytes}
HOST_ONLY_WEIGHTS = ("model.embed_tokens.weight",)
# Each projection matrix's role (ops/linear/fidelity.py ROLES), by the last part of its parameter name.
_MATRIX_ROLES = {"gate_proj.weight": "mlp_gate_up", "up_proj.weight": "mlp_gate_up", "down_proj.weight": "mlp_down",
                 "in_proj_qkv.weight": "gdn_in", "in_proj_z.weight": "gdn_in", "in_proj_b.weight": "gdn_in",
                 "in_proj_a.weight": "gdn_in", "out_proj.weight": "gdn_out", "q_proj.weight": "attention_in",
                 "k_proj.weight": "attention_in", "v_proj.weight": "attention_in", "o_proj.weight": "attention_out",
                 "lm_head.weight": "lm_head"}


def matrix_role(name: str) -> str:
    """The projection role of a weight matrix by its parameter name (e.g. 'model.layers.0.mlp.up_proj.weight')."""
    for suffix, role in _MATRIX_ROLES.items():
        if name == suffix or name.endswith("." + suffix):
            return role
    raise MemoryPlanError(f"{name!r} is not a projection matrix the device stack holds")


class MemoryPlanError(ValueError):
    """The model does not fit: the message has each part in GB and what to change."""


def _tiles(rows: int, cols: int) -> int:
    return -(-rows // TILE) * -(-cols // TILE)


def _held(name: str, layers: range | None, num_layers: int) -> bool:
    """Whether a stage of `layers` (all when None) holds parameter `name`: its layers' own, and, on the last
    stage, the final norm and the LM head."""
    if layers is None:
        return True
    match = re.match(r"model\.layers\.(\d+)\.", name)
    return int(match.group(1)) in layers if match else layers.stop == num_layers


def weight_bytes(config: ModelConfig, weight_format: str, layers: range | None = None) -> int:
    """Device bytes of the resident weights, as the device stack holds them (model/device_stack.layer_weights):
    matrices in their role's format of `weight_format` ("bfp8", or "bfp8,mlp_gate_up=bfp4":
    ops/linear/weight_formats.py), vectors (norm weights, the GDN gates' and gated norm's) as one fp32 tile row
    each, the conv taps as one fp32 tile row per tap. `layers`: a pipeline stage's (pipeline_split.py), None the whole model."""
    from ttprefill.ops.linear.weight_formats import WeightFormatError, WeightFormats

    try:
        formats = WeightFormats.parse(weight_format)
    except WeightFormatError as error:
        raise MemoryPlanError(str(error)) from None
    total = 0
    for name, shape in parameter_shapes(config).items():
        if name in HOST_ONLY_WEIGHTS or not _held(name, layers, config.num_layers):
            continue
        if len(shape) == 2:
            total += _tiles(*shape) * formats.of(matrix_role(name)).tile_bytes
        elif len(shape) == 3:  # the depthwise conv taps [channels, 1, kernel]: each tap a tile row of fp32, the
            total += _tiles(shape[2] * TILE, shape[0]) * TILE_BYTES["fp32"]  # tap in all 32 rows (conv_tap_rows)
        else:  # norm weights and GDN vectors: one row-broadcast fp32 tile row (NormWeight, broadcast_rows)
            total += _tiles(1, shape[0]) * TILE_BYTES["fp32"]
    return total


def _gdn_layers(config: ModelConfig, layers: range | None) -> int:
    return sum(1 for i in config.gdn_layers if layers is None or i in layers)


def state_bytes(config: ModelConfig, layers: range | None = None) -> int:
    """The live GDN states of every GDN layer of one request, as the device stack holds them: a ping-pong pair
    (the state a chunk reads, the one it writes) of the recurrent state [HV K, V] in fp32 tiles and the conv
    state [kernel - 1, channels] in bf16 tiles (one tile row)."""
    recurrent = _tiles(config.gdn_num_v_heads * config.gdn_key_head_dim, config.gdn_value_head_dim) * TILE_BYTES["fp32"]
    conv = _tiles(config.gdn_conv_state_len, config.gdn_conv_channels) * TILE_BYTES["bf16"]
    return _gdn_layers(config, layers) * 2 * (recurrent + conv)


def _checkpoints_per_chunk(chunk_tokens: int, gdn_chunk: int | None, block_tokens: int | None) -> int:
    """At most one checkpoint per block boundary inside a chunk (per GDN chunk when block_tokens is None) and
    one at its end."""
    from ttprefill.ops.gdn import DEFAULT_CHUNK

    return (chunk_tokens - 1) // (block_tokens or gdn_chunk or DEFAULT_CHUNK) + 1


def checkpoint_read_bytes(config: ModelConfig, chunk_tokens: int, gdn_chunk: int | None = None,
                          block_tokens: int | None = None, layers: range | None = None) -> int:
    """What a chunk's GDN checkpoint tensors hold on a chip whose heads `config` has: per GDN layer the scan's
    checkpoint-state tensor (each checkpoint's [HV K, V] fp32 state) and the conv rows of every checkpoint
    (kernel - 1 row-major bf16 rows each, in whole 2 KB pages of 1024 values). A GDN block allocates them and
    they stay until the chunk ends (their reads run beside the later blocks), so all GDN layers' are live at
    once at the chunk's peak: exact when the largest block runs on or after the last GDN layer (its own MLP
    block always does; Qwen3.5's last layer is attention), an upper bound otherwise. A chunk without checkpoints
    holds less: its GDN blocks' one-slot state tensors only, each freed with its block."""
    if not config.gdn_layers:
        return 0
    n = _checkpoints_per_chunk(chunk_tokens, gdn_chunk, block_tokens)
    recurrent = _tiles(n * config.gdn_num_v_heads * config.gdn_key_head_dim, config.gdn_value_head_dim)
    conv_pages = n * config.gdn_conv_state_len * -(-config.gdn_conv_channels // 1024)
    return _gdn_layers(config, layers) * (recurrent * TILE_BYTES["fp32"] + conv_pages * 2048)


def input_buffer_bytes(config: ModelConfig, chunk_tokens: int) -> int:
    """The second input buffer: the next chunk's embeddings [T, hidden] in bf16 tiles, uploaded while a chunk
    runs."""
    return _tiles(chunk_tokens, config.hidden_size) * TILE_BYTES["bf16"]


def rope_table_bytes(config: ModelConfig, positions: int) -> int:
    """fp32 cos and sin [positions, rotary width] in tiles; rotary dims under a tile take a whole tile's width."""
    if not config.attention_layers or positions <= 0:
        return 0
    return 2 * _tiles(positions, max(config.rotary_dim, TILE)) * TILE_BYTES["fp32"]


def page_table_bytes(config: ModelConfig, pages: int) -> int:
    """A request's UInt32 page table [ceil(pages / 32), 32] on the device: 32x32 tiles of 4 bytes, interleaved
    over the DRAM banks, each bank holding the same number of tile slots (so at least one tile per bank: a
    table this small is the one tensor where that rounding is most of its size)."""
    if not config.attention_layers or pages <= 0:
        return 0
    tiles = _tiles(-(-pages // TILE), TILE)
    return -(-tiles // DRAM_BANKS) * DRAM_BANKS * TILE * TILE * 4


def _block_temporaries(cfg: ModelConfig, chunk_tokens: int, gdn_chunk: int | None,
                       block_tokens: int | None) -> int:
    """The largest block's own temporaries on a chip holding `cfg`'s heads and MLP width, without its normed
    input and its row-parallel projection's output (activation_bytes counts those by the scheme):
      MLP        the SwiGLU output [T, I] (gate and up run as one program that writes only silu(gate) * up);
      attention  the fused q|gate|k|v projection, normed q and k, the per-head Q, gate and O, the chunk's K and
                 V per head, the merged heads;
      GDN        qkv (pre- and post-conv), z|b|a, o, y, g, beta and the scan's scratch; its checkpoint tensors
                 (the states and conv rows at the chunk's checkpoints) outlive the block and are counted with
                 every GDN layer's in checkpoint_read_bytes.
    bf16 tiles but g, beta and the scan's scratch (fp32)."""
    from ttprefill.device.program import DataFormat
    from ttprefill.ops.gdn import DEFAULT_CHUNK
    from ttprefill.ops.gdn.programs import scan_scratch_shapes
    from ttprefill.ops.gdn.shapes import ScanShape

    rows = -(-chunk_tokens // TILE) * TILE

    def bf16(*widths):
        return sum(_tiles(rows, w) for w in widths) * TILE_BYTES["bf16"]

    blocks = [bf16(cfg.intermediate_size)]
    if cfg.attention_layers:
        Hq, Hkv, D = cfg.attn_num_heads, cfg.attn_num_kv_heads, cfg.attn_head_dim
        per_head = (3 * Hq + 2 * Hkv) * _tiles(rows, D) * TILE_BYTES["bf16"]
        blocks.append(bf16(Hq * 2 * D + 2 * Hkv * D, Hq * D, Hkv * D, Hq * D) + per_head)
    if cfg.gdn_layers:
        dims, C = cfg.gdn_dims, cfg.gdn_conv_channels
        hv, vdim = dims.v_heads, dims.v_heads * dims.value_dim
        chunk = gdn_chunk or DEFAULT_CHUNK
        scratch = sum(_tiles(*shape) * DataFormat(fmt).tile_bytes
                      for shape, fmt in scan_scratch_shapes(ScanShape.of(dims, chunk_tokens, chunk)))
        # g and beta fp32; b and a a tile column each of z|b|a, in bf16 beside z's columns
        gates = 2 * _tiles(rows, hv) * (TILE_BYTES["fp32"] + TILE_BYTES["bf16"])
        blocks.append(bf16(C, C, vdim, vdim, vdim) + gates + scratch)
    return max(blocks)


def activation_bytes(config: ModelConfig, chunk_tokens: int, gdn_chunk: int | None = None,
                     block_tokens: int | None = None, *, mesh_shape: tuple[int, int] = (1, 1),
                     scheme: str = DEFAULT_SCHEME,
                     collective_dtype: CollectiveDtype = DEFAULT_COLLECTIVE_DTYPE) -> int:
    """A chunk's device working set on each chip, at its peak: the end of the largest block, when all of the
    block's temporaries are live (the device stack frees them together when the block ends). Always: the
    chunk's residual rows and the normed rows the chunk keeps for the next block (device_stack forward), the
    block's own temporaries on the chip's share of the heads (_block_temporaries) and the partial sum its
    row-parallel projection leaves. By the tensor-parallel scheme over a mesh of `mesh_shape` (rows, cols):
      one chip        residual and normed [T, hidden];
      all_reduce      the same, plus the all_reduce's output [T, hidden];
      reduce_scatter  residual and normed [T padded / chips, hidden] (model/tensor_parallel TokenShards), the
                      all_gather's outputs (columns first: [rows a chip * cols, hidden], then [T padded, hidden];
                      one per mesh axis with more than one chip), the partial sum [T padded, hidden] and the
                      reduce_scatter's outputs (rows first: [T padded / mesh rows, hidden], then
                      [T padded / chips, hidden]).
    On a mesh the normed rows and gathers are in collective_dtype's gather format (reduce_scatter scheme), the
    partial sums and the reductions' outputs in its reduce format (model/collective_dtype.py); the rest bf16.
    T counts in whole tile rows."""
    from ttprefill.model.tensor_parallel import TokenShards

    mesh_rows, mesh_cols = mesh_shape
    chips = mesh_rows * mesh_cols
    cfg = config
    if chips > 1:  # a split the model does not allow raises the plan's TensorParallelError, which names the sizes
        cfg = TensorParallelPlan(config, chips, scheme).chip_config(0)
    def row_bytes(fmt) -> int:  # one row of hidden, tiled
        return _tiles(TILE, config.hidden_size) * fmt.tile_bytes // TILE

    bf16 = row_bytes(DataFormat.Float16_b)
    gather = row_bytes(collective_dtype.format("gather"))
    reduce = row_bytes(collective_dtype.format("reduce")) if chips > 1 else bf16
    temporaries = _block_temporaries(cfg, chunk_tokens, gdn_chunk, block_tokens)
    rows = -(-chunk_tokens // TILE) * TILE
    if chips == 1 or scheme == "all_reduce":  # residual and normed rows bf16; the partial sum and its all_reduce
        collective = rows if chips > 1 else 0
        return 2 * rows * bf16 + (rows + collective) * reduce + temporaries
    split = TokenShards(chunk_tokens, chips)
    gathered = ([split.rows * mesh_cols] if mesh_cols > 1 else []) + ([split.padded] if mesh_rows > 1 else [])
    scattered = ([split.padded // mesh_rows] if mesh_rows > 1 else []) + ([split.rows] if mesh_cols > 1 else [])
    return (split.rows * bf16 + (split.rows + sum(gathered)) * gather + (split.padded + sum(scattered)) * reduce
            + temporaries)


def _stage_parts(config: ModelConfig, layers: range, *, weight_format: str, cache_budget_bytes: int,
                 chunk_tokens: int, rope_positions: int, gdn_chunk: int | None, block_tokens: int | None,
                 kv_pages: int, runs_ahead: int) -> dict[str, int]:
    """What the chip of one pipeline stage holds (model/pipeline_stack.py): its layers' weights, K/V pools, GDN
    states and checkpoint tensors; one chip's chunk working set; the input buffer on the first stage; the RoPE
    tables and page table where it has attention layers; and the chunks it has run whose results the host has yet
    to take (`runs_ahead`, beside the one it runs; DeviceStack.start): each holds its checkpoint tensors and, on
    every stage but the last, the rows it hands on."""
    attention = sum(1 for i in config.attention_layers if i in layers)
    last = layers.stop == config.num_layers
    rows = 0 if last else _tiles(-(-chunk_tokens // TILE) * TILE, config.hidden_size) * TILE_BYTES["bf16"]
    checkpoints = checkpoint_read_bytes(config, chunk_tokens, gdn_chunk, block_tokens, layers)
    return {
        "weights": weight_bytes(config, weight_format, layers),
        # every attention layer's pools hold the same pages: the stage's share of the budget
        "cache": -(-cache_budget_bytes * attention // max(1, len(config.attention_layers))),
        "gdn_states": state_bytes(config, layers),
        "activations": activation_bytes(config, chunk_tokens, gdn_chunk, block_tokens),
        "checkpoint_reads": checkpoint_read_bytes(config, chunk_tokens, gdn_chunk, block_tokens, layers),
        "input_buffer": input_buffer_bytes(config, chunk_tokens) if layers.start == 0 else 0,
        "rope_tables": rope_table_bytes(config, rope_positions) if attention else 0,
        "page_table": page_table_bytes(config, kv_pages) if attention else 0,
        "runs_ahead": runs_ahead * (rows + checkpoints),
    }


@dataclass(frozen=True)
class MemoryPlan:
    model: str
    weight_format: str
    chips: int
    parts: dict[str, int] = field(default_factory=dict)  # bytes on each chip, by kind
    capacity: int = DRAM_BYTES_PER_CHIP

    @property
    def total(self) -> int:
        return sum(self.parts.values())

    @property
    def fits(self) -> bool:
        return self.total <= self.capacity

    def describe(self) -> str:
        parts = ", ".join(f"{k} {v / 1e9:.2f} GB" for k, v in self.parts.items())
        return (f"{self.model} ({self.weight_format} weights, {self.chips} chip(s)): {parts}; "
                f"total {self.total / 1e9:.2f} GB of {self.capacity / 1e9:.2f} GB per chip")

    def check(self) -> "MemoryPlan":
        if self.fits:
            return self
        from ttprefill.ops.linear.weight_formats import WeightFormats

        ways = []
        if "bf16" in WeightFormats.parse(self.weight_format).as_dict().values():  # any role, not only "bf16" alone
            ways.append("bfp8 weights")
        ways += ["a smaller cache budget", "a shorter chunk", "more chips (a mesh)"]
        raise MemoryPlanError(f"does not fit: {self.describe()}; try {', '.join(ways)}")

    def as_dict(self) -> dict:
        return {"model": self.model, "weight_format": self.weight_format, "chips": self.chips,
                "parts_bytes": dict(self.parts), "total_bytes": self.total, "capacity_bytes": self.capacity,
                "fits": self.fits}


def plan_memory(config: ModelConfig, *, weight_format: str, cache_budget_bytes: int, chunk_tokens: int,
                chips: int = 1, rope_positions: int = 0, gdn_chunk: int | None = None,
                block_tokens: int | None = None, kv_pages: int = 0, mesh_shape: tuple[int, int] | None = None,
                scheme: str = DEFAULT_SCHEME,
                collective_dtype: CollectiveDtype = DEFAULT_COLLECTIVE_DTYPE, parallel: str = TENSOR) -> MemoryPlan:
    """Each chip's share when weights, cache and states are split evenly over `chips` (tensor parallel, a mesh
    of `mesh_shape`, (1, chips) when None, under collective `scheme`); a chunk's activations and its GDN
    checkpoint tensors as a chip holds them (activation_bytes; checkpoint_read_bytes of the chip's heads). A GDN
    layer's checkpoint tensors are counted once, in checkpoint_reads: its block allocates them and the chunk
    holds them to its end, so at the peak every GDN layer's are live beside the largest block's temporaries."""
    if chips < 1:
        raise MemoryPlanError(f"chips must be at least 1, got {chips}")
    mesh_shape = (1, chips) if mesh_shape is None else tuple(mesh_shape)
    if len(mesh_shape) != 2 or mesh_shape[0] * mesh_shape[1] != chips:
        raise MemoryPlanError(f"mesh_shape {mesh_shape} does not hold {chips} chips: give (rows, cols) with "
                              f"rows * cols = chips")
    if cache_budget_bytes < 0 or chunk_tokens < 1:
        raise MemoryPlanError("cache_budget_bytes must be >= 0 and chunk_tokens >= 1")
    if parallel == PIPELINE and chips > 1:
        # Every stage but the last holds one run beside the one it runs: the pipeline stack takes a run's results
        # when the next stage takes its rows, issued a wavefront after it (pipeline_timing.forward_runs).
        stages = [_stage_parts(config, layers, weight_format=weight_format, cache_budget_bytes=cache_budget_bytes,
                               chunk_tokens=chunk_tokens, rope_positions=rope_positions, gdn_chunk=gdn_chunk,
                               block_tokens=block_tokens, kv_pages=kv_pages, runs_ahead=int(k < chips - 1))
                  for k, layers in enumerate(stage_layers(config.num_layers, chips))]
        return MemoryPlan(config.name, weight_format, chips, max(stages, key=lambda parts: sum(parts.values())))
    chip = TensorParallelPlan(config, chips, scheme).chip_config(0) if chips > 1 else config
    parts = {
        "weights": -(-weight_bytes(config, weight_format) // chips),
        "cache": -(-cache_budget_bytes // chips),
        "gdn_states": state_bytes(chip),  # the chip's heads (q/k heads shared by chips are held by each)
        "activations": activation_bytes(config, chunk_tokens, gdn_chunk, block_tokens, mesh_shape=mesh_shape,
                                        scheme=scheme, collective_dtype=collective_dtype),
        "checkpoint_reads": checkpoint_read_bytes(chip, chunk_tokens, gdn_chunk, block_tokens),
        "input_buffer": input_buffer_bytes(config, chunk_tokens),
        "rope_tables": rope_table_bytes(config, rope_positions),
        "page_table": page_table_bytes(config, kv_pages),
    }
    return MemoryPlan(config.name, weight_format, chips, parts)
