"""What the device stack (model/device_stack.py) asks of its chips: one device, or a mesh split by the plan.

DeviceStack runs one chip's programs and leaves to a split what differs between one chip and many:

    OneChip     one device: every weight whole, nothing to reduce, states as they are.
    MeshSplit   the chips of a mesh, split by TensorParallelPlan(config, chips, scheme) (model/tensor_parallel.py;
                scheme "all_reduce" or "reduce_scatter", EngineOptions.tp_scheme):
        weights       every chip runs the same programs on its share (plan.chip_config: its heads, its MLP
                      width, its vocabulary rows). Each weight is built by the one-chip code once per chip, from
                      that chip's slice (plan.weight_slice), and written to that chip's shard of one mesh tensor
                      (ttnn.from_host_shards), so the host-side preparation (transposes, conv tap rows, norm
                      factors, LM head column chunks) is the one-chip code's. Norm weights come out the same on
                      every chip.
        activations   scheme "all_reduce": the residual stream is replicated. Each row-parallel projection (GDN
                      out_proj, attention o_proj, MLP down_proj) leaves a partial sum [T, hidden] on every chip;
                      one all_reduce sums them before the residual add, and every chip gets the same sum.
                      scheme "reduce_scatter" (sequence parallel): the residual stream is split by tokens, chip c
                      (row-major) holding rows c R .. (c + 1) R - 1 of it (TokenShards: the chunk padded with
                      zero rows to whole tile rows a chip, R = the padded length / chips). A block's RMSNorm runs
                      on the chip's R rows, an all_gather over the tokens hands every chip the whole normed
                      [T, hidden] for the column-parallel projections, and a reduce_scatter over the tokens of
                      the row-parallel projection's partial sums leaves each chip the summed rows it adds to
                      its residual rows. Padding rows are never read by a token's computation (every op
                      between the gather and the scatter runs on the first T rows; norms and adds are per row).
        LM head       vocabulary rows split (the short slices padded with zero rows to the widest when the
                      vocabulary does not divide); each chip extracts its last-token row, one all_gather of the
                      rows, one download from the first chip. Under "reduce_scatter" the last token's row lives on
                      one chip: every chip normalises the tile row at that token's local position in its rows and
                      an all_gather of those tile rows gives every chip the owner's, which the LM head reads.
        state         K/V pages: each chip's pool holds its kv heads of every page, so one page id names one
                      logical page over the mesh and the prefix cache's page table is unchanged. GDN conv and
                      recurrent states: each chip keeps its conv channels and v heads; sync_to_host composes the
                      whole state from the shards (a q/k head replicated on several chips holds the same values on
                      each), so a checkpoint payload is the model's logical state, not a mesh's.

Across mesh shapes: a checkpoint payload is the logical state, so it can be restored on any mesh shape (it is
split again on upload). The K/V pages of a prefix live in the device pools of the engine that computed them,
and that engine's prefix cache is its own, so a prefix hit never crosses engines, nor mesh shapes.

Host traffic: an upload to a mesh writes every chip's copy (replicated tensors) or shard, so `copies` is what
the stack multiplies a per-chip tensor's bytes by when it counts what went down.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ttprefill.device.program import DataFormat
from ttprefill.device.tensor import DeviceTensor
from ttprefill.model.collective_dtype import DEFAULT as DEFAULT_COLLECTIVE_DTYPE
from ttprefill.model.collective_dtype import CollectiveDtype
from ttprefill.model.config import ModelConfig
from ttprefill.model.tensor_parallel import (
    DEFAULT_SCHEME,
    TILE,
    VOCAB,
    TensorParallelError,
    TensorParallelPlan,
    TokenShards,
)

BF16, FP32 = DataFormat.Float16_b, DataFormat.Float32


@dataclass
class Residual:
    """A chunk's residual stream on a chip: `rows` is the chip's part of it ([tokens, hidden] when replicated,
    [TokenShards.rows, hidden] when split by tokens), `tokens` the chunk's length."""

    rows: object
    tokens: int


def as_residual(x) -> Residual:
    """A Residual, or a device tensor taken as the whole, replicated stream of its rows."""
    return x if isinstance(x, Residual) else Residual(x, x.shape[0])


def first_rows(tensor, rows: int):
    """The first `rows` rows of a tiled [R, width] tensor, as a tensor at the same address (no copy): pages are
    numbered row-major over tiles, so the first tile rows are the first pages, interleaved over the banks as
    the whole tensor's are. The whole tensor keeps ownership (free it, not the view)."""
    if tensor.shape[0] == rows:
        return tensor
    if not 0 < rows <= tensor.shape[0] or len(tensor.shape) != 2:
        raise TensorParallelError(f"cannot view the first {rows} rows of a tensor of shape {list(tensor.shape)}")
    shape = (rows, tensor.shape[1])
    shards = getattr(tensor, "shards", None)
    if shards is None:
        if hasattr(tensor.device, "view_rows"):  # a card: its tensors are ttnn handles, the card makes the view
            return tensor.device.view_rows(tensor, rows)
        if type(tensor) is not DeviceTensor:  # a card's tensor is a ttnn handle, not an address alone
            raise TensorParallelError(
                f"a {type(tensor).__name__} gives no view of its first {rows} rows, which a chunk the reduce_scatter "
                "scheme pads needs: use the all_reduce scheme on this device")
        return DeviceTensor(shape, tensor.data_format, tensor.address, tensor.device)
    return type(tensor)(shape, tensor.data_format, tensor.address, tensor.device, placements=tensor.placements,
                        shards=[first_rows(t, rows) for t in shards])


@dataclass
class CollectiveTimes:
    """The collectives a stack ran: counts by kind, modeled seconds (the Ethernet model, device/mesh_timing.py),
    each chip's input bytes, and the bytes over the busiest link direction."""

    count: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    bytes_per_chip: int = 0
    busiest_link_bytes: int = 0

    def add(self, kind: str, report, nbytes_per_chip: int) -> None:
        self.count[kind] = self.count.get(kind, 0) + 1
        self.seconds += float(report.extra.get("modeled_s", 0.0))
        self.bytes_per_chip += int(nbytes_per_chip)
        self.busiest_link_bytes += int(report.counters.get("ethernet_busiest_link_bytes", 0))

    def as_dict(self) -> dict:
        return {"modeled": True, "count": dict(self.count), "modeled_s": self.seconds,
                "bytes_per_chip": self.bytes_per_chip, "busiest_link_bytes": self.busiest_link_bytes}


class OneChip:
    """The whole model on one device."""

    chips = copies = 1
    scheme = DEFAULT_SCHEME
    collective_dtype = CollectiveDtype("bf16", "bf16")  # what collectives carry (EngineOptions'); none on one chip

    def __init__(self, config: ModelConfig):
        self.config = self.chip_config = config
        self.vocab_rows = [config.vocab_size]
        self.collectives = CollectiveTimes()

    # ---- the residual stream: replicated (one chip, scheme all_reduce) or split by tokens (reduce_scatter)
    @property
    def splits_tokens(self) -> bool:
        return self.scheme == "reduce_scatter" and self.chips > 1

    def padded_tokens(self, tokens: int) -> int:
        """Rows of a chunk's gathered activations and of the partial sums a row-parallel projection leaves."""
        return TokenShards(tokens, self.chips).padded if self.splits_tokens else tokens

    @property
    def gather_format(self) -> DataFormat:
        """Format of the normed rows a block's column-parallel projections read: the gather's when the stream is
        split by tokens, else bf16 (nothing is gathered)."""
        return self.collective_dtype.format("gather") if self.splits_tokens else BF16

    @property
    def partial_format(self) -> DataFormat:
        """Format of a row-parallel projection's partial sums and of their reduction: the reduction's on a mesh,
        else bf16 (nothing is reduced)."""
        return self.collective_dtype.format("reduce") if self.chips > 1 else BF16

    def residual_rows(self, tokens: int) -> int:
        """Rows of a chunk's residual stream on each chip."""
        return TokenShards(tokens, self.chips).rows if self.splits_tokens else tokens

    def last_token_home(self, tokens: int) -> tuple[int, int]:
        """(chip, row in that chip's residual rows) of a chunk's last token; chip 0 when replicated."""
        return TokenShards(tokens, self.chips).home(tokens - 1) if self.splits_tokens else (0, tokens - 1)

    def embed(self, scratch, rows: np.ndarray) -> Residual:
        """A chunk's embedding rows [T, hidden] (fp32, host) uploaded as its residual stream."""
        return Residual(scratch.upload(rows, BF16), len(rows))

    def gather(self, scratch, normed):
        """Every chip's normed residual rows, concatenated in chip order on every chip (identity when replicated)."""
        return normed

    def each_chip(self, src, make):
        """make(src): a resident weight from the weights in src."""
        return make(src)

    def upload_gdn_state(self, device, conv: np.ndarray, rec: np.ndarray):
        """conv [W-1, C], rec [HV, K, V] (fp32 arrays) -> the device's conv [W-1, C] bf16 and rec [HV K, V] fp32."""
        return device.upload(conv, BF16), device.upload(rec.reshape(-1, rec.shape[-1]), FP32)

    def download_gdn_state(self, device, conv_t, rec_t) -> tuple[np.ndarray, np.ndarray]:
        """The whole conv [W-1, C] and recurrent [HV K, V] state of a layer."""
        return device.download(conv_t), device.download(rec_t)

    def download_checkpoints(self, device, kept) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """A GDN layer's states at checkpoints inside a chunk (device_stack.GdnCheckpointTensors): offset ->
        (the whole conv [W-1, C], the whole recurrent [HV K, V])."""
        return kept.download(device)

    def reduce(self, scratch, partial):
        return partial

    def download_row(self, device, scratch, row) -> tuple[list[np.ndarray], int]:
        """A last-token logits row: each chip's values (in chip order) and the bytes the download moved."""
        return [row.download(device)], row.nbytes

    def assemble_logits(self, parts: list[list[np.ndarray]]) -> np.ndarray:
        """parts[j][c]: LM head chunk j's values on chip c -> the logits in vocabulary order."""
        return np.concatenate([np.concatenate([p[c] for p in parts])[:rows] for c, rows in enumerate(self.vocab_rows)])


class ChipWeights(Mapping):
    """One chip's slice of every weight (plan.weight_slice), cut when asked for; vocabulary slices padded with
    zero rows to `vocab_rows`, so that every chip's LM head has the same shape."""

    def __init__(self, plan: TensorParallelPlan, weights: Mapping, chip: int, vocab_rows: int):
        self.plan, self.weights, self.chip, self.vocab_rows = plan, weights, chip, vocab_rows

    def __getitem__(self, name: str) -> np.ndarray:
        cut = self.plan.weight_slice(name, self.chip)
        part = cut.take(np.asarray(self.weights[name]))
        if cut.kind == VOCAB and part.shape[0] < self.vocab_rows:
            pad = np.zeros((self.vocab_rows - part.shape[0],) + part.shape[1:], part.dtype)
            part = np.concatenate([part, pad])
        return part

    def __iter__(self):
        return iter(self.weights)

    def __len__(self) -> int:
        return len(self.weights)


class _ShardWriter:
    """Stands in for the mesh while the one-chip weight code runs once per chip: in chip c's pass, the k-th
    upload (or allocation) is chip c's shard of the k-th mesh tensor, allocated in chip 0's pass."""

    def __init__(self, mesh, stacked):
        self.mesh, self.stacked = mesh, stacked
        self.tensors: list = []
        self.chip = self.made = 0

    @property
    def capabilities(self):
        return self.mesh.capabilities

    def start(self, chip: int) -> None:
        if chip and self.made != len(self.tensors):
            raise TensorParallelError(f"chip {chip - 1} made {self.made} weight tensors, chip 0 made "
                                      f"{len(self.tensors)}: the split must give every chip the same tensors")
        self.chip, self.made = chip, 0

    def _next(self, shape: tuple[int, ...], data_format: DataFormat):
        if self.chip == 0:
            self.tensors.append(self.mesh.allocate(shape, data_format, self.stacked))
        if self.made >= len(self.tensors):
            raise TensorParallelError(f"chip {self.chip} makes more weight tensors than chip 0 ({len(self.tensors)})")
        t = self.tensors[self.made]
        self.made += 1
        if t.shape != shape or t.data_format is not data_format:
            raise TensorParallelError(f"chip {self.chip}'s share of a weight is {list(shape)} {data_format.name}, "
                                      f"chip 0's {list(t.shape)} {t.data_format.name}: the split must give every "
                                      "chip the same shapes")
        return t

    def allocate(self, shape, data_format: DataFormat):
        return self._next(tuple(int(s) for s in shape), DataFormat(data_format))

    def upload(self, array: np.ndarray, data_format: DataFormat):
        t = self._next(tuple(np.shape(array)), DataFormat(data_format))
        self.mesh.write_shard(t, self.chip, array)
        return t


class _ShardReader:
    """Stands in for the mesh where one-chip code reads pages back: it reads chip `chip`'s shard."""

    def __init__(self, mesh, chip: int):
        self.mesh, self.chip = mesh, chip

    def read_pages(self, tensor, first_page: int, num_pages: int) -> np.ndarray:
        return self.mesh.read_shard_pages(tensor, self.chip, first_page, num_pages)


class MeshSplit(OneChip):
    """The model split over every chip of a mesh (chips in row-major order, as TensorParallelPlan counts them)."""

    def __init__(self, config: ModelConfig, mesh, scheme: str = DEFAULT_SCHEME,
                 collective_dtype: CollectiveDtype = DEFAULT_COLLECTIVE_DTYPE):
        from ttprefill.device.mesh_placement import shard_placements

        rows, cols = mesh.capabilities.mesh_shape
        needed = ("write_shard", "download_shards", "all_reduce", "all_gather", "reduce_scatter")
        if not all(hasattr(mesh, name) for name in needed):
            raise TensorParallelError(
                f"a tensor-parallel split over the {rows}x{cols} mesh needs per-chip uploads and collectives; "
                f"{type(mesh).__name__} has none (it replicates every program): run the mesh on the simulator "
                "(backend sim)")
        # names the mesh sizes that work when it cannot split, and the schemes when the scheme is unknown
        self.plan = TensorParallelPlan(config, rows * cols, scheme)
        self.scheme, self.collective_dtype = scheme, _checked_dtype(collective_dtype)
        self.mesh, self.config = mesh, config
        self.chips = self.copies = rows * cols
        self.vocab_rows = [len(s.vocab) for s in self.plan.shards]
        self.chip_config = self.plan.chip_config(0).with_changes(vocab_size=max(self.vocab_rows))
        # chip c's own values, stacked along dim 0: ShardTensorToMesh(dim 0) of the stack hands chip c its part
        self.stacked = shard_placements(0)
        self.collectives = CollectiveTimes()

    # ---- weights
    def each_chip(self, src, make):
        """make(chip source) run once per chip on that chip's weights; returns chip 0's result, whose tensors
        are mesh tensors holding every chip's values (kept in src, to free)."""
        writer = _ShardWriter(self.mesh, self.stacked)
        first = None
        for chip in range(self.chips):
            writer.start(chip)
            weights = None if src.weights is None else ChipWeights(self.plan, src.weights, chip, max(self.vocab_rows))
            chip_src = type(src)(writer, weights, src.formats)
            out = make(chip_src)
            if chip == 0:
                first = out
                src.tensors += chip_src.tensors
        writer.start(self.chips)
        return first

    def _upload_shards(self, arrays: list[np.ndarray], data_format: DataFormat):
        t = self.mesh.allocate(arrays[0].shape, data_format, self.stacked)
        for chip, a in enumerate(arrays):
            self.mesh.write_shard(t, chip, a)
        return t

    # ---- GDN state: chip c keeps its conv channels and its v heads
    def upload_gdn_state(self, device, conv: np.ndarray, rec: np.ndarray):
        V = rec.shape[-1]
        convs = [np.ascontiguousarray(conv[:, self.plan.conv_state_channels(c)]) for c in range(self.chips)]
        recs = [rec[self.plan.recurrent_state_heads(c)].reshape(-1, V) for c in range(self.chips)]
        return self._upload_shards(convs, BF16), self._upload_shards(recs, FP32)

    def download_gdn_state(self, device, conv_t, rec_t) -> tuple[np.ndarray, np.ndarray]:
        return self._compose(list(zip(device.download_shards(conv_t), device.download_shards(rec_t))))

    def download_checkpoints(self, device, kept) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        per_chip = [kept.download(_ShardReader(device, c)) for c in range(self.chips)]
        return {offset: self._compose([chip[offset] for chip in per_chip]) for offset in kept.offsets}

    def _compose(self, shards: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        """Chip c's (conv [W-1, C_c], rec [HV_c K, V]) -> the whole conv [W-1, C] and rec [HV K, V]."""
        cfg = self.config
        K, V = cfg.gdn_key_head_dim, cfg.gdn_value_head_dim
        conv = np.zeros((cfg.gdn_conv_kernel - 1, cfg.gdn_conv_channels), np.float32)
        rec = np.zeros((cfg.gdn_num_v_heads, K, V), np.float32)
        for c, (conv_c, rec_c) in enumerate(shards):
            conv[:, self.plan.conv_state_channels(c)] = conv_c
            rec[self.plan.recurrent_state_heads(c)] = np.asarray(rec_c).reshape(-1, K, V)
        return conv, rec.reshape(-1, V)

    # ---- collectives
    def embed(self, scratch, rows: np.ndarray) -> Residual:
        if not self.splits_tokens:
            return super().embed(scratch, rows)
        split = TokenShards(len(rows), self.chips)
        padded = np.zeros((split.padded, rows.shape[1]), np.float32)
        padded[:len(rows)] = rows
        # chip c its rows c R .. (c + 1) R - 1, written through the scratch: an InputBuffer (the next chunk's)
        # issues the write on a card's transfer queue, beside the programs
        x = self.mesh.allocate((split.rows, rows.shape[1]), BF16, self.stacked)
        scratch.tensors.append(x)
        scratch.write(x, padded)
        return Residual(x, len(rows))

    def reduce(self, scratch, partial):
        """The sum over chips of a row-parallel projection's partial outputs: all of it on every chip
        (all_reduce), or each chip its own rows of it (reduce_scatter over the tokens, dim 0, chips row-major).
        The reduce-scatter runs one mesh axis at a time, rows first: along axis 0 chip (r, c) keeps block r of its
        column's sum, along axis 1 sub-block c of that over its row, so chip r * cols + c ends with rows block
        r * cols + c, the order the token split needs (a whole-mesh call leaves the order to ttnn)."""
        if not self.splits_tokens:
            total = self.mesh.all_reduce(partial)
            scratch.tensors.append(total)
            self.collectives.add("all_reduce", self.mesh.last_report, partial.nbytes)
            return total
        total = partial
        for axis in scatter_axes(self.mesh.capabilities.mesh_shape):
            nbytes = total.nbytes
            total = self.mesh.reduce_scatter(total, dim=0, cluster_axis=axis)
            scratch.tensors.append(total)
            self.collectives.add("reduce_scatter", self.mesh.last_report, nbytes)
        return total

    def gather(self, scratch, normed):
        """All chips' rows along dim 0 on every chip (the reduce_scatter scheme); identity when replicated."""
        return self._gather(scratch, normed, dim=0) if self.splits_tokens else normed

    def _gather(self, scratch, tensor, dim: int):
        """all_gather over every chip in row-major order: along the mesh's columns, then its rows (a 1-D fabric
        gathers one axis at a time; columns first keeps chip c's part at position c)."""
        rows, cols = self.mesh.capabilities.mesh_shape
        for axis in [a for a in (1, 0) if (rows, cols)[a] > 1]:
            nbytes = tensor.nbytes
            tensor = self.mesh.all_gather(tensor, dim=dim, cluster_axis=axis)
            scratch.tensors.append(tensor)
            self.collectives.add("all_gather", self.mesh.last_report, nbytes)
        return tensor

    def download_row(self, device, scratch, row) -> tuple[list[np.ndarray], int]:
        """Every chip's row gathered on every chip (along the mesh's columns, then its rows: a 1-D fabric
        gathers one axis at a time), downloaded once. The gather concatenates the chips' row pages, so chip c's
        values start at page c * (the row's pages)."""
        from ttprefill.ops.layout.row import VALUES_PER_PAGE, DeviceRow

        gathered = self._gather(scratch, row.tensor, dim=1)
        whole = DeviceRow(gathered, gathered.num_pages * VALUES_PER_PAGE)
        values = whole.download(device).reshape(self.chips, row.tensor.num_pages * VALUES_PER_PAGE)
        return [values[c, :row.width] for c in range(self.chips)], whole.nbytes


class CollectiveShapes(OneChip):
    """A tensor-parallel split's shapes on one timing-only device (bench ttft --mesh): the chip's share of the
    residual stream and the outputs of the split's collectives allocated as a chip of `chips` has them, the
    collectives themselves not run (the bench times them with the Ethernet model)."""

    def __init__(self, config: ModelConfig, chips: int, scheme: str = DEFAULT_SCHEME,
                 collective_dtype: CollectiveDtype = DEFAULT_COLLECTIVE_DTYPE):
        super().__init__(config)
        TensorParallelPlan(config, 1, scheme)  # refuses an unknown scheme, naming the ones there are
        self.chips, self.scheme, self.collective_dtype = chips, scheme, _checked_dtype(collective_dtype)

    def gather(self, scratch, normed):
        if self.splits_tokens:
            return scratch.alloc((normed.shape[0] * self.chips, normed.shape[1]), normed.data_format)
        return normed

    def reduce(self, scratch, partial):
        if self.splits_tokens:
            return scratch.alloc((partial.shape[0] // self.chips, partial.shape[1]), partial.data_format)
        return partial


def scatter_axes(mesh_shape: tuple[int, int]) -> list[int]:
    """The mesh axes the token split's reduce-scatter runs over, in order: rows (axis 0) first, so the chunks
    land in row-major chip order; the all-gather that undoes it runs columns first (MeshSplit._gather)."""
    return [a for a in (0, 1) if mesh_shape[a] > 1]


def chip_split(config: ModelConfig, device, scheme: str = DEFAULT_SCHEME,
               collective_dtype: CollectiveDtype = DEFAULT_COLLECTIVE_DTYPE) -> OneChip:
    """The split for `device`: one chip, or every chip of its mesh under collective `scheme`, its collectives
    carrying `collective_dtype`."""
    rows, cols = device.capabilities.mesh_shape
    return OneChip(config) if rows * cols == 1 else MeshSplit(config, device, scheme, collective_dtype)


def _checked_dtype(collective_dtype) -> CollectiveDtype:
    if not isinstance(collective_dtype, CollectiveDtype):
        raise TensorParallelError("collective_dtype must be a CollectiveDtype (model/collective_dtype.py; "
                                  "CollectiveDtype.parse('bfp8') or 'gather=bfp8,reduce=bf16'), got "
                                  f"{collective_dtype!r}")
    return collective_dtype
