"""The programs of one prompt through the whole model on one chip, chunk by chunk, as parts (timing-only
simulator runs): what bench ttft sums for one chip (bench/ttft.py) and bench ttft --parallel pipeline hands out
to its stages (bench/ttft_pipeline.py).

Identical layers run identical programs, so a chunk's parts are one GDN layer's mixer block and its MLP block
(simulated once per distinct chunk length and checkpoint offsets, and reused), one attention layer with its MLP
(once per chunk: its prefix grows), the page table update, and the model's edges; the head (final norm, LM head,
row extract) once, on the last chunk's last tile row. Each part comes with the host transfers it makes. Weights
are shapes only, in the options' weight formats.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ttprefill.device.host_link import HostTransfer
from ttprefill.hw import TILE
from ttprefill.model.device_stack import OpTimes

EMBEDDING_BYTES = 2  # the residual rows (embeddings, a stage's hand-off) are bf16 tiles


def repeated(t: HostTransfer, count: int) -> HostTransfer:
    """`count` layers' copies of one layer's transfer, as one transfer of their bytes and calls."""
    return replace(t, nbytes=count * t.nbytes, calls=count * t.calls)


def _inner_checkpoint_reads(kept) -> tuple[HostTransfer, ...]:
    """One GDN layer's reads of the states at checkpoints inside a chunk, as GdnCheckpointTensors.download makes
    them: the conv rows of every checkpoint (one tensor, one read) and the recurrent states (one tensor, one
    read)."""
    if kept is None:
        return ()
    return tuple(HostTransfer("gdn_checkpoint", "up", nbytes, page_size, 1) for nbytes, page_size in kept.reads)


def model_edges(once, runner, s, x, input_norm, normed) -> None:
    """Adds to `once` (a chunk's OpTimes) what differs from the layer runs at the model's two ends: the first
    layer's input norm runs on its own (into `normed`), and the last layer's MLP ends with a plain residual add
    where the layers, as simulated, end with an add fused with the next layer's input norm (their difference:
    the plain add's programs counted, the fused one's taken out)."""
    from ttprefill.model.device_stack import OP_KINDS

    runner(once).norm(s, x.rows, input_norm, out=normed)
    y = s.alloc(x.rows.shape, runner(once).split.partial_format)  # a reduction's output
    fused, plain = OpTimes(), OpTimes()
    runner(fused).add_norm(x.rows, y, input_norm, normed)
    runner(plain).residual(x.rows, y)
    for kind in OP_KINDS:
        once.seconds[kind] += plain.seconds[kind] - fused.seconds[kind]
        once.programs[kind] += plain.programs[kind] - fused.programs[kind]


def gdn_and_mlp_times(per_shape, key, runner, times, s, x, gdn_w, state, checkpoints, normed):
    """(GDN block times, MLP block times, inner checkpoint reads) of one GDN layer at `key` (its tokens and
    checkpoint offsets), simulated the first time the key is asked for and reused after: every GDN layer of a
    chunk shape runs the same programs. `times` makes the OpTimes each block adds to."""
    if key not in per_shape:
        gdn_t, mlp_t = times(), times()
        kept = runner(gdn_t).gdn_block(s, x, gdn_w, state, checkpoints, normed)
        runner(mlp_t).mlp_block(s, x, gdn_w, normed, gdn_w.input_norm)
        per_shape[key] = (gdn_t, mlp_t, _inner_checkpoint_reads(kept))
    return per_shape[key]


@dataclass(frozen=True)
class ChunkParts:
    """One chunk's programs, each kind of layer once, and the host transfers they make."""

    start: int
    tokens: int
    checkpoints: tuple[int, ...]
    page_table: OpTimes  # the page table update: once a chunk, for the attention layers' K/V pages
    edges: OpTimes  # the model's ends (model_edges): the first layer's input norm alone, the last MLP's plain add
    gdn: OpTimes  # one GDN layer's mixer block
    gdn_mlp: OpTimes  # the MLP block of a GDN layer
    attention: OpTimes  # one attention layer: its mixer block and its MLP block
    checkpoint_reads: tuple[HostTransfer, ...]  # one GDN layer's reads of the chunk's checkpoint states
    # one GDN layer's reads of its end state after a chunk too short to hold the conv rows (sync_to_host)
    end_reads: tuple[HostTransfer, ...]
    embeddings: HostTransfer  # the chunk's input rows, down


@dataclass(frozen=True)
class HeadParts:
    """The prompt's end on its last chunk: the final norm, the LM head and the row extract, and the logits row."""

    times: OpTimes
    logits: tuple[HostTransfer, ...]  # up, one per LM head slab (the row extract's pages)


class ChunkSimulator:
    """The whole model's state on one timing-only simulated chip (one layer's weights of each kind, the K/V
    cache, the GDN state, the RoPE tables, the page table), and the chunks the engine runs a lone prompt in.
    `split` gives the programs a mesh chip's shapes (tensor_parallel_device; OneChip: the whole model);
    `marking` runs bench/ttft_micro.py's MarkingRunner (the micro-batch schedule's marks)."""

    def __init__(self, config, o, seq: int, costs: str, split=None, marking: bool = False):
        import numpy as np

        from ttprefill.cache.checkpoints import CheckpointPolicy
        from ttprefill.device.program import DataFormat
        from ttprefill.device.sim_device import SimDevice
        from ttprefill.model.device_stack import FP32, GdnDeviceState, WeightSource, layer_weights
        from ttprefill.model.tensor_parallel_device import OneChip
        from ttprefill.ops.attention import KVCache, ResidentPageTable
        from ttprefill.ops.linear import ChunkedDenseWeight
        from ttprefill.ops.rope import RopeTables
        from ttprefill.scheduler import lone_request_chunks

        self.config, self.o, self.marking = config, o, marking
        self.device = device = SimDevice(timing_only=True, costs=costs)
        src = WeightSource(device, None, o.weight_formats)
        self.gdn_w = layer_weights(src, config, config.gdn_layers[0])
        self.attn_w = layer_weights(src, config, config.attention_layers[0])
        self.final_norm = src.norm(config.hidden_size)
        self.lm_head = ChunkedDenseWeight.allocate(device, config.hidden_size, config.vocab_size,
                                                   o.weight_formats.lm_head)
        src.tensors.append(self.lm_head)
        self.pages = -(-seq // o.block_tokens)
        self.cache = KVCache.create(device, self.pages, o.block_tokens, config.attn_num_kv_heads,
                                    config.attn_head_dim, o.kv_page_format)
        dims = config.gdn_dims
        self.state = GdnDeviceState(
            device.allocate((3, dims.conv_channels), DataFormat.Float16_b),
            device.allocate((3, dims.conv_channels), DataFormat.Float16_b),
            device.allocate((dims.v_heads * dims.key_dim, dims.value_dim), FP32),
            device.allocate((dims.v_heads * dims.key_dim, dims.value_dim), FP32))
        self.split = split if split is not None else OneChip(config)
        self.rope = RopeTables.upload(device, np.arange(-(-seq // TILE) * TILE), config.rotary_dim,
                                      config.rope_theta)
        self.table = ResidentPageTable(device, self.pages)
        self.checkpoints = CheckpointPolicy(o.checkpoint_every_blocks).positions(seq, 0, o.block_tokens)
        self.plan = lone_request_chunks(seq, 0, self.checkpoints, max_chunk_tokens=o.tokens_per_chunk,
                                        token_budget_per_step=o.step_token_budget, chunk_alignment=o.gdn_chunk)
        # (length, offsets) -> one GDN block, its MLP, its checkpoint reads
        self.per_shape: dict[tuple, tuple[OpTimes, OpTimes, tuple]] = {}
        self.attention_runs = 0

    def runner(self, times):
        from ttprefill.model.device_stack import LayerRunner

        from .ttft_micro import MarkingRunner

        o = self.o
        make = MarkingRunner if self.marking else LayerRunner  # marks: bench/ttft_micro.py
        return make(self.config, self.device, gdn_chunk=o.gdn_chunk, gdn_fidelity=o.gdn_fidelity,
                    attention_fidelity=o.attention_fidelity, times=times, matmul_fidelity=o.matmul_fidelity,
                    split=self.split)

    def checkpoint_offsets(self, chunk) -> tuple[tuple[int, ...], bool]:
        """The chunk's checkpoint offsets as the device stack takes them, and whether its end state comes up with
        them (DeviceStack.forward's sync_end: a chunk long enough to hold the conv rows)."""
        at_end = chunk.end in chunk.checkpoints
        end_shared = at_end and chunk.num_tokens >= self.config.gdn_conv_kernel - 1
        offsets = tuple(p - chunk.start for p in chunk.inner_checkpoints) + ((chunk.num_tokens,) if end_shared else ())
        return offsets, at_end and not end_shared

    def end_reads(self) -> tuple[HostTransfer, ...]:
        """One GDN layer's reads of its end state tensors (a chunk too short to hold its conv rows)."""
        return tuple(HostTransfer("gdn_checkpoint", "up", t.nbytes, t.page_size, 1)
                     for t in (self.state.conv, self.state.rec))

    def embeddings(self, tokens: int, page_size: int) -> HostTransfer:
        """A chunk's input rows: the chip's residual rows, whole tile rows of bf16."""
        rows = -(-self.split.residual_rows(tokens) // TILE) * TILE
        return HostTransfer("embeddings", "down", rows * self.config.hidden_size * EMBEDDING_BYTES, page_size)

    def begin(self, chunk):
        """A chunk's scratch, its residual rows and the page table update's times (the first programs of every
        chunk); the caller frees the scratch."""
        from ttprefill.model.device_stack import Scratch
        from ttprefill.model.tensor_parallel_device import Residual

        s = Scratch(self.device)
        x = Residual(s.alloc((self.split.residual_rows(chunk.num_tokens), self.config.hidden_size)), chunk.num_tokens)
        page_table = OpTimes()
        self.table.sync(range(self.pages), -(-chunk.end // self.o.block_tokens), reports=self.runner(page_table).r("rest"))
        return s, x, page_table

    def chunk(self, chunk) -> ChunkParts:
        """One chunk's parts (every chunk of the plan in order: the page table and K/V prefix grow)."""
        from ttprefill.model.stack import ChunkContext

        offsets, end_after = self.checkpoint_offsets(chunk)
        s, x, page_table = self.begin(chunk)
        try:
            # each block's normed input, written by the add that ends the one before, in the gather's format
            normed = s.alloc(x.rows.shape, self.split.gather_format)
            edges = OpTimes()
            model_edges(edges, self.runner, s, x, self.gdn_w.input_norm, normed)
            gdn_t, mlp_t, inner_reads = gdn_and_mlp_times(self.per_shape, (chunk.num_tokens, offsets), self.runner,
                                                          OpTimes, s, x, self.gdn_w, self.state, offsets, normed)
            attn = OpTimes()
            r = self.runner(attn)
            r.attention_block(s, x, self.attn_w, self.cache, self.table.tensor,
                              ChunkContext(chunk.start, chunk.num_tokens, tuple(range(self.pages))), self.rope,
                              normed)
            r.mlp_block(s, x, self.attn_w, normed, self.attn_w.input_norm)
            self.attention_runs += 1
            return ChunkParts(chunk.start, chunk.num_tokens, tuple(chunk.checkpoints), page_table, edges, gdn_t,
                              mlp_t, attn, inner_reads, self.end_reads() if end_after else (),
                              HostTransfer("embeddings", "down", x.rows.nbytes, x.rows.page_size))
        finally:
            s.free()

    def head(self, tokens: int) -> HeadParts:
        """The last chunk's (of `tokens`) final norm and LM head on the tile row of its last token, and the row
        extract of that token's logits."""
        from ttprefill.model.device_stack import Scratch
        from ttprefill.model.tensor_parallel_device import Residual
        from ttprefill.ops.layout import extract_row
        from ttprefill.ops.linear import linear

        s = Scratch(self.device)
        try:
            last = OpTimes()
            r = self.runner(last)
            x = Residual(s.alloc((self.split.residual_rows(tokens), self.config.hidden_size)), tokens)
            h, last_row = r.head_input(s, x, self.final_norm)  # the tile row of the last token (and its gather)
            rows_up = []
            for w in self.lm_head.chunks:
                out = s.alloc((h.shape[0], w.n_out))
                linear(self.device, h, w, out, fidelity=self.o.matmul_fidelity.lm_head, reports=r.r("matmul"))
                row = extract_row(self.device, out, last_row, reports=r.r("rest"))
                s.tensors.append(row.tensor)
                rows_up.append(HostTransfer("logits", "up", row.nbytes, row.tensor.page_size, gathered=True))
            return HeadParts(last, tuple(rows_up))
        finally:
            s.free()
