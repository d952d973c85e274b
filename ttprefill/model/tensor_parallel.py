"""The tensor-parallel plan of the hybrid stack over the N chips of one mesh axis.

Which weight goes where (HF layout, see weights.py; all matrices [out, in]):

    column-parallel (output features split, input replicated):
        GDN in_proj_qkv, in_proj_z, in_proj_a, in_proj_b; attention q_proj, k_proj, v_proj; MLP gate/up
    row-parallel (input features split; each chip's output is a partial sum, summed across chips):
        GDN out_proj, attention o_proj, MLP down_proj
    follow their channels / heads: conv1d taps (the chip's q, k, v channels), A_log and dt_bias (its v heads)
    replicated: every RMSNorm weight (decoder norms, GDN's per-head norm, q_norm / k_norm)
    vocabulary-split: lm_head (and embed_tokens, which the host gathers from the full table; a chip's slice
        of it matters only when the head is tied to it); the chips' logits are gathered

Heads, not rows, are the unit of the split:
- GDN: chip c holds a contiguous run of HV/N value heads and the q/k heads they read (value head j reads
  q/k head j // (HV/H)). Its in_proj_qkv rows (and conv channels) are three pieces, its q heads' rows,
  its k heads' rows, its v heads' rows, out of the layout [q heads | k heads | v heads]. When a chip holds
  fewer value heads than share one q/k head, that q/k head is replicated on every chip that needs it.
- Attention: chip c holds Hq/N query heads (q_proj's rows are per head [q | gate], 2*D rows a head) and
  the kv heads they read; kv heads are replicated when chips outnumber them (a T3000's 8 chips over
  Qwen3.5-27B's 4 kv heads: each kv head on 2 chips).
- MLP: I/N intermediate features a chip; vocabulary: contiguous ranges (the last ones one row shorter
  when N does not divide it).

Collectives, per layer and chunk of T tokens:
    scheme "all_reduce": the residual stream replicated between blocks; one all-reduce of the
        [T, hidden] partial sums after each row-parallel projection (two per layer: the mixer's and the MLP's);
    scheme "reduce_scatter" (sequence parallel; the default, DEFAULT_SCHEME says why): the residual stream
        split by tokens between blocks, the chunk padded with zero rows to whole tile rows a chip
        (TokenShards: R = 32 * ceil(T / (32 N)) rows a chip); per block an all-gather of each chip's R
        normalised rows before the block's column-parallel projections and a reduce-scatter over the tokens
        of the row-parallel projection's [N R, hidden] partial sums (each chip adds its R rows); the same
        bytes on the links when T fills the tiles, the norms' and residual adds' work split;
    and at the end of the prompt one all-gather of the last token's logits [1, vocab/N] (under
    "reduce_scatter" after one of the tile row of the last token's final norm, which only its chip holds).

`per_chip_ops(config, tp, seq, chunk)` lists every op a chip runs with its per-chip shape and every
collective with its bytes, for a TTFT benchmark to time; `collective_times` times the collectives with
the Ethernet model (device/mesh_timing.py). Modeled, not measured.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ttprefill.device.program import DataFormat
from ttprefill.model.config import ModelConfig
from ttprefill.model.weights import parameter_shapes
from ttprefill.hw import TILE

SCHEMES = ("all_reduce", "reduce_scatter")
# reduce_scatter by measurement: `ttprefill bench ttft --seq 32768 --timing-only --json --scheme S` (central,
# timing model 2.4, mesh timing 4, bfp8 collectives, both schemes on the same tree, the block edges' add + norm
# fused; modeled), all_reduce -> reduce_scatter: Qwen3.5-9B 1x2 4.66 -> 4.49 s (norms and fused adds 0.34 ->
# 0.18, collectives 0.91 both); 27B 2x4 line 9.95 -> 7.68 s (norms 0.80 -> 0.27, collectives 5.68 -> 3.98: the
# scatter and the gather cross each mesh axis with that axis's share, where the whole-mesh all_reduce reduces
# the whole tensor on each); 27B 1x8 ring 6.27 -> 5.70 s. Accuracy the same: the tiny model's last-token
# logits against one chip PCC 0.99995 on 1x2 under either scheme (tests/test_mesh_prefill*.py).
DEFAULT_SCHEME = "reduce_scatter"
# the device stack's residual stream and the partial sums it reduces are bf16 tiles of 32 x 32
ACTIVATION_BYTES = DataFormat.Float16_b.tile_bytes // (32 * 32)
MAX_LISTED_MESH_SIZE = 64  # how far the error message looks for mesh sizes that work

COLUMN, ROW, REPLICATED, VOCAB = "column", "row", "replicated", "vocab"


class TensorParallelError(ValueError):
    """A config that cannot be split over the requested number of chips; the message names the numbers."""


def _head_groups(num_heads: int, num_shared: int, tp: int, what: str, shared_what: str) -> str | None:
    """Why `num_heads` heads that read `num_shared` shared heads (num_heads // num_shared each) cannot be
    split over tp chips, or None when they can."""
    if num_heads % tp:
        return f"{what} ({num_heads}) are not a multiple of {tp}"
    per_chip = num_heads // tp
    group = num_heads // num_shared
    if per_chip % group and group % per_chip:
        return (f"{per_chip} {what} a chip neither hold whole groups of {group} (the {what} that read one "
                f"of the {num_shared} {shared_what}) nor divide such a group")
    return None


def _split_problems(config: ModelConfig, tp: int) -> list[str]:
    problems = []
    if config.gdn_layers:
        problem = _head_groups(config.gdn_num_v_heads, config.gdn_num_qk_heads, tp, "GDN value heads",
                               "GDN q/k heads")
        if problem:
            problems.append(problem)
    if config.attention_layers:
        problem = _head_groups(config.attn_num_heads, config.attn_num_kv_heads, tp, "attention q heads",
                               "kv heads")
        if problem:
            problems.append(problem)
    if config.intermediate_size % tp:
        problems.append(f"the MLP's intermediate size ({config.intermediate_size}) is not a multiple of {tp}")
    if config.vocab_size < tp:
        problems.append(f"the vocabulary ({config.vocab_size}) has fewer rows than chips")
    return problems


def valid_tp_sizes(config: ModelConfig, up_to: int = MAX_LISTED_MESH_SIZE) -> list[int]:
    """The numbers of chips (1..up_to) that the config's heads and widths split over."""
    return [n for n in range(1, up_to + 1) if not _split_problems(config, n)]


def _contiguous(chip: int, per_chip: int) -> range:
    return range(chip * per_chip, (chip + 1) * per_chip)


def _shared_heads(heads: range, group: int) -> range:
    """The shared heads (q/k of GDN, kv of attention) that `heads` read, head j reading j // group."""
    return range(heads.start // group, (heads.stop - 1) // group + 1)


@dataclass(frozen=True)
class ChipShard:
    """What one chip of the split holds: global head indices and feature ranges."""

    chip: int
    gdn_qk_heads: range
    gdn_v_heads: range
    attn_q_heads: range
    attn_kv_heads: range
    ffn: range  # intermediate features of the MLP
    vocab: range  # LM head rows (token ids)


@dataclass(frozen=True)
class WeightSlice:
    """How a chip's copy of one weight is cut from the full one: `index` along `axis`, or all of it (axis None)."""

    kind: str  # COLUMN, ROW, REPLICATED or VOCAB
    axis: int | None = None
    index: np.ndarray | None = field(default=None, compare=False)

    def take(self, array: np.ndarray) -> np.ndarray:
        if self.axis is None:
            return array
        return np.take(array, self.index, axis=self.axis)


@dataclass(frozen=True)
class Collective:
    """One collective over the TP chips: `nbytes_per_chip` is each chip's input (its shard for all_gather,
    its whole partial tensor for reduce_scatter and all_reduce), as mesh_timing.collective_time takes it."""

    kind: str  # "all_reduce", "reduce_scatter" or "all_gather"
    layer: int | None  # None: after the last layer (the LM head's logits)
    after: str  # the op whose output it reduces or gathers
    shape: tuple[int, ...]  # each chip's input tensor
    nbytes_per_chip: int
    block: str = ""  # the part of the layer it runs in: "mixer", "mlp", or "head" after the last layer
    feeds: str | None = None  # the matmul that reads its output, for a gather that precedes one
    page_bytes: int = DataFormat.Float16_b.tile_bytes  # a tile of its format: the pages its fabric packets carry

    def as_dict(self) -> dict:
        out = asdict(self)
        out["shape"] = list(self.shape)
        return out


@dataclass(frozen=True)
class TokenShards:
    """How the reduce_scatter scheme splits a chunk of `tokens` tokens over `chips` chips: the chunk padded with
    zero rows to `padded` rows, a whole number of tile rows a chip (the collectives move whole tiles, and a
    chip's rows start on a tile row); chip c (row-major) holds rows c * rows .. (c + 1) * rows - 1."""

    tokens: int
    chips: int

    @property
    def rows(self) -> int:
        return -(-self.tokens // (TILE * self.chips)) * TILE

    @property
    def padded(self) -> int:
        return self.rows * self.chips

    def home(self, token: int) -> tuple[int, int]:
        """(chip, row on that chip) of a token of the chunk."""
        if not 0 <= token < self.tokens:
            raise TensorParallelError(f"token {token} is outside the chunk of {self.tokens}")
        return divmod(token, self.rows)


class TensorParallelPlan:
    """The split of `config` over `tp` chips (the chips of one mesh axis, or a whole mesh in row-major order)."""

    def __init__(self, config: ModelConfig, tp: int, scheme: str = DEFAULT_SCHEME):
        if isinstance(tp, bool) or not isinstance(tp, (int, np.integer)) or tp < 1:
            raise TensorParallelError(f"the number of tensor-parallel chips must be a positive integer, got {tp!r}")
        if scheme not in SCHEMES:
            raise TensorParallelError(f"unknown collective scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
        tp = int(tp)
        problems = _split_problems(config, tp)
        if problems:
            works = valid_tp_sizes(config)
            raise TensorParallelError(
                f"{config.name} cannot be split over {tp} chips: " + "; ".join(problems)
                + f". Mesh sizes (chips along the tensor-parallel axis) that work for it: {works}")
        self.config = config
        self.tp = tp
        self.scheme = scheme
        self.shards = [self._chip_shard(c) for c in range(tp)]
        self._shapes = parameter_shapes(config)

    # ---- who holds what ---------------------------------------------------------------------------
    def _chip_shard(self, chip: int) -> ChipShard:
        cfg, n = self.config, self.tp
        v_heads = _contiguous(chip, cfg.gdn_num_v_heads // n)
        q_heads = _contiguous(chip, cfg.attn_num_heads // n)
        vocab_start, vocab_stop = chip * cfg.vocab_size // n, (chip + 1) * cfg.vocab_size // n
        return ChipShard(
            chip=chip,
            gdn_qk_heads=_shared_heads(v_heads, cfg.gdn_num_v_heads // cfg.gdn_num_qk_heads),
            gdn_v_heads=v_heads,
            attn_q_heads=q_heads,
            attn_kv_heads=_shared_heads(q_heads, cfg.attn_num_heads // cfg.attn_num_kv_heads),
            ffn=_contiguous(chip, cfg.intermediate_size // n),
            vocab=range(vocab_start, vocab_stop),
        )

    def _check_chip(self, chip: int) -> ChipShard:
        if not 0 <= chip < self.tp:
            raise TensorParallelError(f"chip {chip} is outside the split over {self.tp} chips (0..{self.tp - 1})")
        return self.shards[chip]

    def replication(self, what: str) -> int:
        """How many chips hold each GDN q/k head (what="gdn_qk") or attention kv head (what="attn_kv")."""
        cfg = self.config
        if what == "gdn_qk":
            return max(1, self.tp // cfg.gdn_num_qk_heads)
        if what == "attn_kv":
            return max(1, self.tp // cfg.attn_num_kv_heads)
        raise ValueError(f"unknown replicated head kind {what!r}; choose 'gdn_qk' or 'attn_kv'")

    def chip_config(self, chip: int) -> ModelConfig:
        """The config of what one chip holds: its heads, its MLP width and its vocabulary slice (hidden size,
        layers and head dims unchanged). A stack over it and `shard(weights, chip)` runs the chip's part."""
        s = self._check_chip(chip)
        return self.config.with_changes(
            name=f"{self.config.name}[tp{self.tp} chip {chip}]",
            gdn_num_qk_heads=len(s.gdn_qk_heads), gdn_num_v_heads=len(s.gdn_v_heads),
            attn_num_heads=len(s.attn_q_heads), attn_num_kv_heads=len(s.attn_kv_heads),
            intermediate_size=len(s.ffn), vocab_size=len(s.vocab))

    # ---- index maps -----------------------------------------------------------------------------------
    def gdn_qkv_channels(self, chip: int) -> np.ndarray:
        """The chip's rows of in_proj_qkv (= its conv channels) in the layout [q heads | k heads | v heads]:
        its q heads' rows, then its k heads', then its v heads' (three runs, not one row range)."""
        s, cfg = self._check_chip(chip), self.config
        K, V, key_dim = cfg.gdn_key_head_dim, cfg.gdn_value_head_dim, cfg.gdn_key_dim
        q = np.arange(s.gdn_qk_heads.start * K, s.gdn_qk_heads.stop * K)
        v = np.arange(s.gdn_v_heads.start * V, s.gdn_v_heads.stop * V)
        return np.concatenate([q, key_dim + q, 2 * key_dim + v])

    def gdn_value_channels(self, chip: int) -> np.ndarray:
        """The chip's channels of z, of the core's output y and of out_proj's input: its v heads' V each."""
        s, V = self._check_chip(chip), self.config.gdn_value_head_dim
        return np.arange(s.gdn_v_heads.start * V, s.gdn_v_heads.stop * V)

    def attn_q_rows(self, chip: int) -> np.ndarray:
        """The chip's rows of q_proj: 2*D rows ([q | gate]) per query head."""
        s, D = self._check_chip(chip), self.config.attn_head_dim
        return np.arange(s.attn_q_heads.start * 2 * D, s.attn_q_heads.stop * 2 * D)

    def attn_kv_rows(self, chip: int) -> np.ndarray:
        s, D = self._check_chip(chip), self.config.attn_head_dim
        return np.arange(s.attn_kv_heads.start * D, s.attn_kv_heads.stop * D)

    def attn_o_columns(self, chip: int) -> np.ndarray:
        s, D = self._check_chip(chip), self.config.attn_head_dim
        return np.arange(s.attn_q_heads.start * D, s.attn_q_heads.stop * D)

    def weight_slice(self, name: str, chip: int) -> WeightSlice:
        """How the chip's copy of weight `name` (HF layout) is cut from the full tensor."""
        s = self._check_chip(chip)
        if name not in self._shapes:
            raise TensorParallelError(f"{name!r} is not a weight of {self.config.name}")
        if name in ("model.embed_tokens.weight", "lm_head.weight"):
            return WeightSlice(VOCAB, 0, np.arange(s.vocab.start, s.vocab.stop))
        leaf = name.split(".", 3)[-1] if name.startswith("model.layers.") else name
        v_heads = np.arange(s.gdn_v_heads.start, s.gdn_v_heads.stop)
        ffn = np.arange(s.ffn.start, s.ffn.stop)
        by_leaf = {
            "linear_attn.in_proj_qkv.weight": (COLUMN, 0, self.gdn_qkv_channels),
            "linear_attn.conv1d.weight": (COLUMN, 0, self.gdn_qkv_channels),
            "linear_attn.in_proj_z.weight": (COLUMN, 0, self.gdn_value_channels),
            "linear_attn.in_proj_a.weight": (COLUMN, 0, lambda c: v_heads),
            "linear_attn.in_proj_b.weight": (COLUMN, 0, lambda c: v_heads),
            "linear_attn.A_log": (COLUMN, 0, lambda c: v_heads),
            "linear_attn.dt_bias": (COLUMN, 0, lambda c: v_heads),
            "linear_attn.out_proj.weight": (ROW, 1, self.gdn_value_channels),
            "self_attn.q_proj.weight": (COLUMN, 0, self.attn_q_rows),
            "self_attn.k_proj.weight": (COLUMN, 0, self.attn_kv_rows),
            "self_attn.v_proj.weight": (COLUMN, 0, self.attn_kv_rows),
            "self_attn.o_proj.weight": (ROW, 1, self.attn_o_columns),
            "mlp.gate_proj.weight": (COLUMN, 0, lambda c: ffn),
            "mlp.up_proj.weight": (COLUMN, 0, lambda c: ffn),
            "mlp.down_proj.weight": (ROW, 1, lambda c: ffn),
        }
        if leaf in by_leaf:
            kind, axis, index = by_leaf[leaf]
            return WeightSlice(kind, axis, index(chip))
        return WeightSlice(REPLICATED)  # norms

    def shard(self, weights: dict[str, np.ndarray], chip: int) -> dict[str, np.ndarray]:
        """The chip's weights: every tensor of the HF layout cut as `weight_slice` says, with the shapes
        parameter_shapes(chip_config(chip)) lists."""
        expected = self._shapes
        missing = [n for n in expected if n not in weights]
        if missing:
            raise TensorParallelError(f"weights lack {missing[:5]} for config {self.config.name}")
        out = {}
        for name, shape in expected.items():
            if tuple(np.shape(weights[name])) != shape:
                raise TensorParallelError(f"tensor {name!r}: expected shape {shape}, got {tuple(np.shape(weights[name]))}")
            out[name] = np.ascontiguousarray(self.weight_slice(name, chip).take(np.asarray(weights[name])))
        return out

    def mesh_layout(self, name: str, array: np.ndarray) -> tuple[np.ndarray, int | None]:
        """Weight `name` laid out for one ttnn-style upload: (array, dim) where sharding `dim` in equal parts
        over the chips in row-major order (ShardTensorToMesh(dim), device.mesh_placement.shard_placements)
        hands chip c exactly `shard(...)[name]`; dim None means replicate the array. The array is the chips'
        slices stacked, so rows a chip shares with another (replicated kv heads, the qkv runs) appear once
        a chip."""
        cut = self.weight_slice(name, 0)
        if cut.axis is None:
            return np.asarray(array), None
        parts = [self.weight_slice(name, chip).take(np.asarray(array)) for chip in range(self.tp)]
        if len({p.shape for p in parts}) != 1:
            widest = max(p.shape[cut.axis] for p in parts)
            raise TensorParallelError(
                f"{name!r}: the chips' slices differ in size (the vocabulary {self.config.vocab_size} does not "
                f"divide by {self.tp}); pad each slice to {widest} rows before an equal-shard upload")
        return np.concatenate(parts, axis=cut.axis), cut.axis

    # ---- state slices (what a chip's GDN states and K/V are, in the full model's terms) ------------------------
    def conv_state_channels(self, chip: int) -> np.ndarray:
        """Columns of a GDN layer's conv state [W-1, C] the chip keeps: its conv channels."""
        return self.gdn_qkv_channels(chip)

    def recurrent_state_heads(self, chip: int) -> np.ndarray:
        """Value heads (axis 0 of [HV, K, V]) of a GDN layer's recurrent state the chip keeps."""
        s = self._check_chip(chip)
        return np.arange(s.gdn_v_heads.start, s.gdn_v_heads.stop)

    def kv_heads(self, chip: int) -> np.ndarray:
        """kv heads (axis 1 of K/V [tokens, Hkv, D]) the chip keeps in its pages."""
        s = self._check_chip(chip)
        return np.arange(s.attn_kv_heads.start, s.attn_kv_heads.stop)

    # ---- collectives ---------------------------------------------------------------------------------
    def layer_collectives(self, layer: int, tokens: int, dtype_bytes: int = ACTIVATION_BYTES,
                          collective_dtype=None) -> list[Collective]:
        """The collectives of one layer on a chunk of `tokens` tokens, in the order they run, each beside its
        matmul: under "all_reduce" one after each row-parallel projection (the mixer's, the MLP's down_proj);
        under "reduce_scatter" per block an all_gather of each chip's normed rows before the block's first
        column-parallel projection, and a reduce_scatter of the row-parallel projection's partial sums, the
        chunk padded to whole tile rows a chip (TokenShards). `collective_dtype` (model/collective_dtype.py):
        the format each kind carries, its tiles' bytes and page size; None: `dtype_bytes` a value, bf16 pages."""
        if self.tp == 1:
            return []

        def sized(kind: str, elements: int) -> dict:
            if collective_dtype is None:
                return {"nbytes_per_chip": elements * dtype_bytes}
            fmt = collective_dtype.format(kind)
            return {"nbytes_per_chip": elements * fmt.tile_bytes // (TILE * TILE), "page_bytes": fmt.tile_bytes}
        hidden = self.config.hidden_size
        attention = self.config.is_attention_layer(layer)
        blocks = (("mixer", "input_layernorm", "qkv_proj" if attention else "in_proj_qkv",
                   "o_proj" if attention else "out_proj"),
                  ("mlp", "post_attention_layernorm", "gate_up_proj", "down_proj"))
        out = []
        for block, norm, first, last in blocks:
            if self.scheme == "all_reduce":
                out.append(Collective("all_reduce", layer, last, (tokens, hidden), block=block,
                                      **sized("reduce", tokens * hidden)))
                continue
            split = TokenShards(tokens, self.tp)
            out.append(Collective("all_gather", layer, norm, (split.rows, hidden), block=block, feeds=first,
                                  **sized("gather", split.rows * hidden)))
            out.append(Collective("reduce_scatter", layer, last, (split.padded, hidden), block=block,
                                  **sized("reduce", split.padded * hidden)))
        return out

    def head_collectives(self, dtype_bytes: int = ACTIVATION_BYTES) -> list[Collective]:
        """The collectives of the prompt's end: the last token's logits gathered from the vocabulary shards (the
        gather takes equal shards: with an uneven vocabulary split every chip pads its shard to the largest),
        and under the reduce_scatter scheme first the last token's residual row gathered from its chip."""
        if self.tp == 1:
            return []
        out = []
        if self.scheme == "reduce_scatter":
            # the residual stream ends split by tokens: every chip normalises the tile row at the last token's
            # place in its rows, and the gather hands every chip the one that holds it, for the LM head
            hidden = self.config.hidden_size
            out.append(Collective("all_gather", None, "final_norm", (TILE, hidden), TILE * hidden * dtype_bytes,
                                  "head", feeds="lm_head"))
        widest = max(len(s.vocab) for s in self.shards)
        out.append(Collective("all_gather", None, "lm_head", (1, widest), widest * dtype_bytes, "head"))
        return out

    def summary(self, tokens: int) -> dict:
        """The plan as plain data: per-chip heads and widths, replication, and the collectives of one layer of
        each kind on a chunk of `tokens` tokens."""
        cfg = self.config
        per_layer = {kind: [c.as_dict() for c in self.layer_collectives(layers[0], tokens)] if layers else []
                     for kind, layers in (("gdn", cfg.gdn_layers), ("attention", cfg.attention_layers))}
        return {
            "model": cfg.name, "tp": self.tp, "scheme": self.scheme,
            "chips": [{"chip": s.chip, "gdn_qk_heads": [s.gdn_qk_heads.start, s.gdn_qk_heads.stop],
                       "gdn_v_heads": [s.gdn_v_heads.start, s.gdn_v_heads.stop],
                       "attn_q_heads": [s.attn_q_heads.start, s.attn_q_heads.stop],
                       "attn_kv_heads": [s.attn_kv_heads.start, s.attn_kv_heads.stop],
                       "ffn": [s.ffn.start, s.ffn.stop], "vocab": [s.vocab.start, s.vocab.stop]} for s in self.shards],
            "gdn_qk_replication": self.replication("gdn_qk"),
            "attn_kv_replication": self.replication("attn_kv"),
            "chunk_tokens": tokens, "collectives_per_layer": per_layer,
        }


# ---------------------------------------------------------------------------------------------
# Per-chip op shapes and collectives of a whole prompt, for a mesh TTFT benchmark
# ---------------------------------------------------------------------------------------------


def _matmul(name: str, m: int, k: int, n: int) -> dict:
    return {"op": "matmul", "name": name, "m": m, "k": k, "n": n}


def _rows_op(op: str, name: str, rows: int, width: int) -> dict:
    return {"op": op, "name": name, "rows": rows, "width": width}


def _layer_ops(cfg: ModelConfig, chip: ModelConfig, layer: int, start: int, tokens: int, norm_rows: int) -> list[dict]:
    """One chip's ops of one layer (mixer block, then MLP block) on a chunk, as the device stack runs them
    (model/device_stack.py LayerRunner): `norm_rows` rows are normalised and added to the residual stream per
    chip (all of them, or TokenShards.rows under the reduce_scatter scheme). A block ends with the residual add
    fused with the next block's RMSNorm ("add_rmsnorm", ops/norm add_rms_norm); only the first layer's input
    norm runs alone, and the last layer's MLP ends with a plain add (the final norm reads one tile row)."""
    from ttprefill.ops.gdn.shapes import zba_columns
    from ttprefill.ops.linear.swiglu import paired_width

    hidden, T = cfg.hidden_size, tokens
    ops = [_rows_op("rmsnorm", "input_layernorm", norm_rows, hidden)] if layer == 0 else []
    if cfg.is_attention_layer(layer):
        Hq, Hkv, D = chip.attn_num_heads, chip.attn_num_kv_heads, chip.attn_head_dim
        # one weight: q_proj's rows (each head's query then its output gate), k_proj's, v_proj's
        ops += [_matmul("qkv_proj", T, hidden, Hq * 2 * D + 2 * Hkv * D),
                _rows_op("rmsnorm", "q_norm", T * Hq, D), _rows_op("rmsnorm", "k_norm", T * Hkv, D),
                _rows_op("rope", "q_rope", T * Hq, chip.rotary_dim), _rows_op("rope", "k_rope", T * Hkv, chip.rotary_dim),
                {"op": "attention", "name": "attention", "start": start, "q_len": T, "kv_len": start + T,
                 "q_heads": Hq, "kv_heads": Hkv, "head_dim": D},
                _rows_op("sigmoid_mul", "output_gate", T, Hq * D), _matmul("o_proj", T, Hq * D, hidden)]
    else:
        HV, V = chip.gdn_num_v_heads, chip.gdn_value_head_dim
        # z, b and a in one weight: z's HV V columns, then b and a each padded to a whole tile column
        ops += [_matmul("in_proj_qkv", T, hidden, chip.gdn_conv_channels),
                _matmul("in_proj_zba", T, hidden, zba_columns(HV, V)[2]),
                {"op": "gdn_core", "name": "gdn_core", "start": start, "tokens": T,
                 "qk_heads": chip.gdn_num_qk_heads, "v_heads": HV, "key_head_dim": chip.gdn_key_head_dim,
                 "value_head_dim": V, "conv_channels": chip.gdn_conv_channels, "conv_kernel": chip.gdn_conv_kernel},
                _matmul("out_proj", T, HV * V, hidden)]
    last = layer == cfg.num_layers - 1
    ops += [_rows_op("add_rmsnorm", "residual_post_attention_layernorm", norm_rows, hidden),
            # gate and up in one weight, their tile columns paired; silu(gate) * up in its compute kernel (no
            # silu_mul pass): out [T, n / 2]
            {**_matmul("gate_up_proj", T, hidden, paired_width(chip.intermediate_size)), "swiglu": True},
            _matmul("down_proj", T, chip.intermediate_size, hidden),
            _rows_op("add", "residual", norm_rows, hidden) if last
            else _rows_op("add_rmsnorm", "residual_next_input_layernorm", norm_rows, hidden)]
    return ops


def _head_ops(config: ModelConfig, tp: int, scheme: str, tokens: int, vocab_rows: int) -> list[dict]:
    """The prompt's last chunk (`tokens` tokens) ends with the final norm of the tile row that holds its last
    token, up to that token, and the LM head on the rows the stack hands it (DeviceStack head_input): that tile
    row alone, or, split by tokens, every chip's tile row gathered in chip order up to the owner's."""
    rows = (tokens - 1) % TILE + 1
    head_rows = rows
    if scheme == "reduce_scatter" and tp > 1:
        owner, _ = TokenShards(tokens, tp).home(tokens - 1)
        head_rows = owner * TILE + rows
    return [_rows_op("rmsnorm", "final_norm", rows, config.hidden_size),
            _matmul("lm_head", head_rows, config.hidden_size, vocab_rows)]


def per_chip_ops(config: ModelConfig, tp: int, seq: int, chunk: int, scheme: str = DEFAULT_SCHEME,
                 dtype_bytes: int = ACTIVATION_BYTES, collective_dtype=None, micro_batches: int = 1,
                 gdn_chunk: int | None = None) -> dict:
    """Every op one chip runs to prefill a `seq`-token prompt in chunks of `chunk` tokens, split over `tp`
    chips, with its per-chip shape, and every collective with its bytes. Plain data (JSON-ready):

        {"model", "tp", "scheme", "seq", "chunk", "dtype_bytes", "chip": per-chip heads and widths,
         "chunks": [{"start", "tokens", "layers": [{"layer", "kind": "gdn" | "attention",
                                                     "ops": [...], "collectives": [...]}]}],
         "head": {"ops": [...], "collectives": [...]},   the last token's final norm, LM head, logits gather
         "collective_bytes_per_chip": sum of every collective's nbytes_per_chip}

    An op is {"op": "matmul", "name", "m", "k", "n"} (activation [m, k] times weight [k, n]; with "swiglu": True,
    the MLP's paired gate | up weight whose program writes silu(gate) * up, [m, n / 2]); {"op":
    "rmsnorm" | "rope" | "add" | "add_rmsnorm" | "sigmoid_mul", "name", "rows", "width"};
    {"op": "gdn_core", "start", "tokens", "qk_heads", "v_heads", "key_head_dim", "value_head_dim", "conv_channels",
    "conv_kernel"} (conv, gates, scan, gated norm); {"op": "attention", "start", "q_len", "kv_len",
    "q_heads", "kv_heads", "head_dim"} (causal over the prompt so far). A collective is Collective.as_dict().
    Chips run the same shapes (the vocabulary shard may be one row shorter on the last chips; the widest
    is listed). Chunk c starts at c * chunk, as the engine's scheduler cuts a prompt. With `micro_batches` 2 each
    chunk is listed as the micro-batches the device stack runs it as (model/micro_batches.py, on GDN chunks of
    `gdn_chunk`, default the kernels'), each entry its own "start" and "tokens" with "micro_batch" (0, 1) and
    "chunk_start"; the LM head reads the last one's rows.
    """
    from ttprefill.model.micro_batches import micro_batch_bounds
    from ttprefill.ops.gdn import DEFAULT_CHUNK

    if seq < 1 or chunk < 1:
        raise ValueError(f"seq and chunk must be positive token counts, got seq={seq}, chunk={chunk}")
    plan = TensorParallelPlan(config, tp, scheme)
    chip = plan.chip_config(0)
    widest_vocab = max(len(s.vocab) for s in plan.shards)
    chunks, total = [], 0
    for chunk_start in range(0, seq, chunk):
        bounds = micro_batch_bounds(min(chunk, seq - chunk_start), micro_batches, gdn_chunk or DEFAULT_CHUNK)
        for k, (first, T) in enumerate(bounds):
            start = chunk_start + first
            collectives = [plan.layer_collectives(i, T, dtype_bytes, collective_dtype)
                           for i in range(config.num_layers)]
            norm_rows = TokenShards(T, tp).rows if scheme == "reduce_scatter" and tp > 1 else T
            layers = [{"layer": i, "kind": "attention" if config.is_attention_layer(i) else "gdn",
                       "ops": _layer_ops(config, chip, i, start, T, norm_rows),
                       "collectives": [c.as_dict() for c in collectives[i]]} for i in range(config.num_layers)]
            total += sum(c.nbytes_per_chip for cs in collectives for c in cs)
            entry = {"start": start, "tokens": T, "layers": layers}
            if micro_batches > 1:
                entry.update(micro_batch=k, chunk_start=chunk_start)
            chunks.append(entry)
    head_collectives = plan.head_collectives(dtype_bytes)
    total += sum(c.nbytes_per_chip for c in head_collectives)
    head_ops = _head_ops(config, tp, scheme, chunks[-1]["tokens"], widest_vocab)
    return {"model": config.name, "tp": tp, "scheme": scheme, "seq": seq, "chunk": chunk, "dtype_bytes": dtype_bytes,
            "micro_batches": micro_batches,
            "collective_dtype": None if collective_dtype is None else str(collective_dtype),
            "chip": {"gdn_qk_heads": chip.gdn_num_qk_heads, "gdn_v_heads": chip.gdn_num_v_heads,
                     "attn_q_heads": chip.attn_num_heads, "attn_kv_heads": chip.attn_num_kv_heads,
                     "intermediate_size": chip.intermediate_size, "vocab_rows": widest_vocab},
            "chunks": chunks,
            "head": {"ops": head_ops, "collectives": [c.as_dict() for c in head_collectives]},
            "collective_bytes_per_chip": total}


WHOLE_MESH_SCHEDULES = ("axis_by_axis", "hierarchical")


def _collective_stages(kind: str, nbytes: float, mesh_shape: tuple[int, int], topology: str, links: int,
                       costs: str, schedule: str, page_bytes: int = DataFormat.Float16_b.tile_bytes) -> float:
    """Seconds of one collective over every chip of the mesh.

    "axis_by_axis": one mesh axis after the other, as the mesh split runs them: a reduce-scatter rows first
    (tensor_parallel_device.scatter_axes), the others columns first (device/mesh.py SimMesh.axes); an
    all-gather's second stage gathers the first stage's output, a reduce-scatter's the chunks the
    first left, an all-reduce reduces the whole tensor on each axis.
    "hierarchical" (all-reduce on a 2-D mesh; what a stack can run with cluster_axis collectives): a
    reduce-scatter along the rows' chips (axis 1), an all-reduce of its 1/cols chunk along axis 0, an
    all-gather of the chunks along axis 1."""
    from ttprefill.device.mesh_timing import collective_time

    def one(kind, nbytes, n):
        return collective_time(kind, nbytes, n, topology if n > 2 else "line", links, costs, page_bytes).seconds

    rows, cols = mesh_shape
    if schedule == "hierarchical" and kind == "all_reduce" and rows > 1 and cols > 1:
        return one("reduce_scatter", nbytes, cols) + one("all_reduce", nbytes / cols, rows) + \
            one("all_gather", nbytes / cols, cols)
    # the token split's reduce-scatter runs rows first (tensor_parallel_device.scatter_axes), so its chunks land
    # in row-major chip order; the other collectives columns first, as the simulated mesh runs a whole-mesh one
    order = (0, 1) if kind == "reduce_scatter" else (1, 0)
    axes = [a for a in order if mesh_shape[a] > 1] or [1]
    seconds = 0.0
    for axis in axes:
        n = mesh_shape[axis]
        seconds += one(kind, nbytes, n)
        if kind == "reduce_scatter":
            nbytes /= n
        elif kind == "all_gather":
            nbytes *= n
    return seconds


def collective_times(ops: dict, mesh_shape: tuple[int, int], topology: str = "line", links: int | None = None,
                     costs: str = "central", schedule: str = "axis_by_axis") -> dict:
    """Time every collective of `per_chip_ops(...)` with the Ethernet model (device/mesh_timing.py): modeled.
    The TP chips are the whole mesh (rows * cols == tp); `topology` "ring" needs a mesh whose wiring closes
    its axes into rings (device.mesh.WIRED_RINGS, e.g. a T3000 as 1x8). Collectives do not overlap compute
    (see mesh_timing), so their seconds add to the chips' compute time. `schedule` says how a 2-D mesh runs
    a whole-mesh all-reduce (WHOLE_MESH_SCHEDULES; see _collective_stages)."""
    from ttprefill.device.mesh import WIRED_RINGS
    from ttprefill.device.mesh_timing import MESH_TIMING_VERSION
    from ttprefill.hw import ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR

    rows, cols = (int(s) for s in mesh_shape)
    if rows * cols != ops["tp"]:
        raise ValueError(f"the ops are split over {ops['tp']} chips but the mesh {rows}x{cols} has {rows * cols}: "
                         "the tensor-parallel chips must be the whole mesh")
    if topology == "ring":
        rings = WIRED_RINGS.get((rows, cols), frozenset())
        unwired = [a for a in (0, 1) if (rows, cols)[a] > 2 and a not in rings]
        if unwired:
            raise ValueError(f"the {rows}x{cols} mesh has no ring over axis {unwired[0]}; use topology='line' "
                             "(a T3000 is a ring only when opened as 1x8)")
    if schedule not in WHOLE_MESH_SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; choose one of {', '.join(WHOLE_MESH_SCHEDULES)}")
    links = ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR if links is None else links
    by_kind: dict[str, dict] = {}
    cache: dict[tuple, float] = {}
    everything = [c for ch in ops["chunks"] for layer in ch["layers"] for c in layer["collectives"]]
    everything += ops["head"]["collectives"]
    for c in everything:
        page_bytes = c.get("page_bytes", DataFormat.Float16_b.tile_bytes)
        key = (c["kind"], c["nbytes_per_chip"], page_bytes)
        if key not in cache:
            cache[key] = _collective_stages(c["kind"], c["nbytes_per_chip"], (rows, cols), topology, links, costs,
                                            schedule, page_bytes)
        entry = by_kind.setdefault(c["kind"], {"count": 0, "seconds": 0.0, "bytes_per_chip": 0})
        entry["count"] += 1
        entry["seconds"] += cache[key]
        entry["bytes_per_chip"] += c["nbytes_per_chip"]
    return {"modeled": True, "mesh_timing_version": MESH_TIMING_VERSION, "model": ops["model"], "tp": ops["tp"],
            "seq": ops["seq"], "chunk": ops["chunk"], "mesh_shape": [rows, cols], "topology": topology,
            "links": links, "costs": costs, "schedule": schedule,
            "seconds": sum(e["seconds"] for e in by_kind.values()), "by_kind": by_kind}


# The meshes of the published anchors: Qwen3.5-9B on an n300 (1x2), Qwen3.5-27B on a T3000 (2x4 line, both
# schedules, and 1x8 ring).
PUBLISHED_MESHES = (("qwen3.5-9b", (1, 2), "line", "axis_by_axis"), ("qwen3.5-27b", (2, 4), "line", "axis_by_axis"),
                    ("qwen3.5-27b", (2, 4), "line", "hierarchical"), ("qwen3.5-27b", (1, 8), "ring", "axis_by_axis"))


def main(argv=None) -> None:
    """Print the modeled collective time of a prompt for the published meshes (JSON)."""
    import argparse
    import json

    from ttprefill.model.config import get_preset

    parser = argparse.ArgumentParser(description="modeled collective time of tensor-parallel prefill")
    parser.add_argument("--seq", type=int, default=32768)
    parser.add_argument("--chunk", type=int, required=True, help="tokens a chunk (the engine's chunk_tokens)")
    parser.add_argument("--costs", default="central")
    parser.add_argument("--scheme", default=DEFAULT_SCHEME, choices=SCHEMES)
    args = parser.parse_args(argv)
    out = []
    for model, mesh, topology, schedule in PUBLISHED_MESHES:
        cfg = get_preset(model)
        ops = per_chip_ops(cfg, mesh[0] * mesh[1], args.seq, args.chunk, args.scheme)
        timed = collective_times(ops, mesh, topology, costs=args.costs, schedule=schedule)
        timed["collective_bytes_per_chip"] = ops["collective_bytes_per_chip"]
        timed["scheme"] = args.scheme
        out.append(timed)
    print(json.dumps({"what": "tensor-parallel collectives, modeled (Ethernet model, device/mesh_timing.py)",
                      "runs": out}, indent=1))


if __name__ == "__main__":
    main()
