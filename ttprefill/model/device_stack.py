"""The whole hybrid stack as device programs: weights and state resident, activations in device DRAM.

    x = embed(tokens)                      host gather; its rows go down once per chunk (bf16)
    per layer:  x += mixer(norm(x));  x += mlp(norm(x))     every op a program (ops/*)
    logits = lm_head(final_norm(x))        only the tile row of the last token, only on a prompt's last chunk;
                                           its last token's row extracted on the device (ops/layout) comes up

Per layer, in programs:
    GDN        in_proj_qkv and one projection of z | b | a (linear), the GDN layer core (ops/gdn: conv, gates,
               scan, gated norm), out_proj, residual add + the MLP's norm
    attention  one fused q|k|v projection (q_proj's rows keep each head's query then its output gate), q_norm
               and k_norm (strided rms_norm), RoPE in place, split_heads (ops/layout) of Q, gate, K, V,
               kv_cache_write, flash attention with the output gate fused, merge_heads, o_proj, residual add +
               the MLP's norm
    MLP        gate_proj and up_proj as one projection with silu(gate) * up applied before packing (ops/linear
               swiglu: one resident weight, their tile columns paired), down_proj, residual add + the next
               layer's input norm
The residual add that ends a block and the next block's RMSNorm are one program (ops/norm add_rms_norm): the
chunk keeps the normed rows for the next block. Only the first layer's input norm runs alone, and the last
MLP ends with a plain add (the final norm reads only the last token's tile row).

What stays on the device: every weight but the embedding (uploaded once here), the RoPE cos/sin tables
of every position the K/V pages can hold (uploaded once here; a chunk's rope reads its rows), the K/V
pages of every attention layer (KVCache, page ids from the prefix cache), and each live request's GDN
conv and recurrent states (ping-pong pairs, swapped after each chunk) and page table (ResidentPageTable,
ops/attention/page_table.py: the chunk's new page ids, and on a request's first chunk its prefix hit's, go
into it as runtime args of a small program of ours, dispatch like every program's buffer addresses, not a
host-to-device data transfer). What crosses per chunk, by kind, is counted in `traffic` (ChunkTraffic): the
embeddings down, the last token's logits row up (bf16, on a prompt's last chunk); GDN states up only
when the engine asks for a checkpoint (kind "gdn_checkpoint"): per GDN layer, right after its block, the
states at every checkpoint of the chunk, inside it and at its end (forward's sync_end), in two reads (the
scan's checkpoint-state tensor; the conv rows before each position, extracted into one tensor), or the
whole state tensors (sync_to_host, e.g. at a prompt's end); and down once when a request starts from one
(or from zeros). What went down once when the stack started is in `setup` (weights, RoPE tables).

RoPE runs in place (ops/rope) for Qwen3.5's 64 rotary dims and the tiny test model's 16 alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import TILE
from ttprefill.model.config import ModelConfig
from ttprefill.model.interleave import Interleaver
from ttprefill.device.pipeline_timing import HANDOFF
from ttprefill.model.stack import ChunkContext, ModelState, UpcomingChunk, attention_scale
from ttprefill.model.weights import layer_prefix
from ttprefill.ops.gdn.shapes import zba_columns

BF16, FP32 = DataFormat.Float16_b, DataFormat.Float32
# Kinds of programs, for the per-op breakdown of modeled time.
OP_KINDS = ("matmul", "attention", "gdn", "norms", "rest")


class DeviceStackError(ValueError):
    """A model or chunk the device stack cannot run; the message names the problem and the fix."""


@dataclass
class ChunkTraffic:
    """Host <-> device bytes of the model's runs, by kind (what this stack asked to move). Programs' runtime
    args (buffer addresses, sizes, the page ids of a page table update) are dispatch, not counted here."""

    down: dict[str, int] = field(default_factory=dict)
    up: dict[str, int] = field(default_factory=dict)

    def add(self, direction: str, kind: str, nbytes: int) -> None:
        table = self.down if direction == "down" else self.up
        table[kind] = table.get(kind, 0) + int(nbytes)


@dataclass
class OpTimes:
    """Modeled seconds and program counts by kind of op."""

    seconds: dict[str, float] = field(default_factory=lambda: {k: 0.0 for k in OP_KINDS})
    programs: dict[str, int] = field(default_factory=lambda: {k: 0 for k in OP_KINDS})

    def add(self, kind: str, reports) -> None:
        for r in reports:
            self.programs[kind] += 1
            if r.modeled_s is not None:
                self.seconds[kind] += r.modeled_s

    @property
    def total_s(self) -> float:
        return sum(self.seconds.values())


# ---------------------------------------------------------------------------------------------------
# Resident weights

@dataclass
class GdnWeights:
    in_qkv: object
    in_zba: object              # in_proj_z, b, a rows in one weight (zba_columns): one projection, one read of x
    out_proj: object
    tap_weights: DeviceTensor   # [4 * 32, C] fp32
    dt_bias_rows: DeviceTensor  # [32, HV] fp32
    a_log_rows: DeviceTensor    # [32, HV] fp32
    norm_rows: DeviceTensor     # [32, V] fp32


@dataclass
class AttentionWeights:
    qkv: object                 # rows: q_proj (query|gate per head), k_proj, v_proj
    q_norm: object
    k_norm: object
    o_proj: object


@dataclass
class LayerWeights:
    input_norm: object
    post_norm: object
    gate_up: object             # gate_proj and up_proj rows paired tile by tile (swiglu.pair_gate_up): one program
    down_proj: object
    mixer: GdnWeights | AttentionWeights


class WeightSource:
    """Makes resident weights: from arrays (upload), or as shapes only (timing-only runs, nothing written).
    `formats`: each projection role's tile format (ops/linear/weight_formats.py; a setting such as
    "bfp8,mlp_gate_up=bfp4" is parsed)."""

    def __init__(self, device, weights: dict[str, np.ndarray] | None, formats):
        from ttprefill.ops.linear.weight_formats import WeightFormats

        self.device, self.weights, self.formats = device, weights, WeightFormats.parse(formats)
        self.tensors: list = []  # everything made, to free

    def _keep(self, t):
        self.tensors.append(t)
        return t

    def array(self, name: str) -> np.ndarray:
        return np.asarray(self.weights[name], np.float32)

    def dense(self, rows: np.ndarray | tuple[int, int], role: str):
        """The weight of projection `role` (fidelity.ROLES), in that role's format."""
        from ttprefill.ops.linear import DenseWeight

        fmt = self.formats.of(role)
        if isinstance(rows, tuple):
            n_out, k_in = rows
            return self._keep(DenseWeight(self.device.allocate((k_in, n_out), fmt), k_in, n_out))
        return self._keep(DenseWeight.upload(self.device, rows, fmt))

    def norm(self, w: np.ndarray | int, zero_centred: bool = True):
        from ttprefill.ops.norm import NormWeight
        from ttprefill.ops.norm.planner import WEIGHT_FORMAT

        if isinstance(w, int):
            return self._keep(NormWeight(self.device.allocate((TILE, w), WEIGHT_FORMAT), w, zero_centred))
        return self._keep(NormWeight.upload(self.device, w, zero_centred=zero_centred))

    def tensor(self, array_or_shape, fmt: DataFormat) -> DeviceTensor:
        if isinstance(array_or_shape, tuple):
            t = self.device.allocate(array_or_shape, fmt)
        else:
            t = self.device.upload(np.ascontiguousarray(array_or_shape, np.float32), fmt)
        self.tensors.append(t)
        return t

    def free(self) -> None:
        for t in self.tensors:
            if isinstance(t, DeviceTensor):
                self.device.free(t)
            else:
                t.free()
        self.tensors = []


def layer_weights(src: WeightSource, config: ModelConfig, i: int) -> LayerWeights:
    """Layer i's weights resident on the device (values when src has arrays, shapes otherwise)."""
    from ttprefill.ops.gdn import broadcast_rows, conv_tap_rows
    from ttprefill.ops.linear.swiglu import pair_gate_up, paired_width

    cfg, p, have = config, layer_prefix(i), src.weights is not None
    H, I = cfg.hidden_size, cfg.intermediate_size

    def dense(name, shape, role):
        return src.dense(src.array(p + name) if have else shape, role)

    def norm(name, width, zero_centred=True):
        return src.norm(src.array(p + name) if have else width, zero_centred)

    if cfg.is_attention_layer(i):
        Hq, Hkv, D = cfg.attn_num_heads, cfg.attn_num_kv_heads, cfg.attn_head_dim
        a = "self_attn."
        rows = (Hq * 2 * D + 2 * Hkv * D, H)
        qkv = src.dense(np.concatenate([src.array(p + a + n + "_proj.weight") for n in "qkv"]) if have else rows,
                        "attention_in")
        mixer = AttentionWeights(qkv, norm(a + "q_norm.weight", D), norm(a + "k_norm.weight", D),
                                 dense(a + "o_proj.weight", (H, Hq * D), "attention_out"))
    else:
        C, HV, V = cfg.gdn_conv_channels, cfg.gdn_num_v_heads, cfg.gdn_value_head_dim
        g = p + "linear_attn."

        def vec_rows(name, n):
            return broadcast_rows(src.array(g + name)) if have else (TILE, n)

        _, _, zba_width = zba_columns(HV, V)
        if have:
            pad = -HV % TILE
            zba = np.concatenate([src.array(g + "in_proj_z.weight"),
                                  *(np.pad(src.array(g + f"in_proj_{n}.weight"), ((0, pad), (0, 0))) for n in "ba")])
        mixer = GdnWeights(
            dense("linear_attn.in_proj_qkv.weight", (C, H), "gdn_in"),
            src.dense(zba if have else (zba_width, H), "gdn_in"),
            dense("linear_attn.out_proj.weight", (H, HV * V), "gdn_out"),
            src.tensor(conv_tap_rows(src.array(g + "conv1d.weight")[:, 0, :]) if have else (4 * TILE, C), FP32),
            src.tensor(vec_rows("dt_bias", HV), FP32), src.tensor(vec_rows("A_log", HV), FP32),
            src.tensor(vec_rows("norm.weight", V), FP32))
    return LayerWeights(norm("input_layernorm.weight", H), norm("post_attention_layernorm.weight", H),
                        src.dense(pair_gate_up(src.array(p + "mlp.gate_proj.weight"), src.array(p + "mlp.up_proj.weight"))
                                  if have else (paired_width(I), H), "mlp_gate_up"),
                        dense("mlp.down_proj.weight", (H, I), "mlp_down"), mixer)


# ---------------------------------------------------------------------------------------------------
# Live GDN state of one request

@dataclass
class GdnDeviceState:
    conv: DeviceTensor       # [3, C] bf16, read by the next chunk
    conv_next: DeviceTensor  # written by the next chunk
    rec: DeviceTensor        # [HV K, V] fp32
    rec_next: DeviceTensor

    def swap(self) -> None:
        self.conv, self.conv_next = self.conv_next, self.conv
        self.rec, self.rec_next = self.rec_next, self.rec

    def tensors(self):
        return (self.conv, self.conv_next, self.rec, self.rec_next)


@dataclass
class GdnCheckpointTensors:
    """One GDN layer's states at checkpoints inside a chunk, on the device: the conv rows of every offset in
    one tensor (kernel - 1 rows per offset, bf16 row-major, oldest first) and the recurrent states (slice i of
    `recurrent`, [HV K, V] fp32 each, one slice per offset and no more). Each comes up in one read."""

    offsets: tuple[int, ...]
    conv_rows: object  # ops/layout DeviceRows, len(offsets) * (kernel - 1) rows
    recurrent: DeviceTensor

    @property
    def reads(self) -> tuple[tuple[int, int], ...]:
        """(bytes, page size) of each blocking read a download makes: the conv rows, the recurrent states."""
        return ((self.conv_rows.nbytes, self.conv_rows.tensor.page_size),
                (self.recurrent.nbytes, self.recurrent.page_size))

    @property
    def nbytes(self) -> int:
        """What a download moves: every page of both tensors (each holds only the checkpoints' states)."""
        return sum(nbytes for nbytes, _ in self.reads)

    def download(self, device) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """offset -> (conv state [kernel - 1, C], recurrent state [HV K, V]), fp32; two reads in all."""
        from ttprefill.device.formats import from_device_bytes

        n = len(self.offsets)
        conv = self.conv_rows.download(device).reshape(n, self.conv_rows.count // n, self.conv_rows.width)
        rows, width = self.recurrent.shape[0] // n, self.recurrent.shape[1]
        raw = device.read_pages(self.recurrent, 0, self.recurrent.num_pages)
        rec = from_device_bytes(raw, FP32, (n * rows, width)).reshape(n, rows, width)
        return {offset: (conv[i], rec[i]) for i, offset in enumerate(self.offsets)}


class _KindReports(list):
    """The `reports` list the ops append to: each report's modeled time goes to `kind` in `times`."""

    def __init__(self, times: OpTimes, kind: str):
        super().__init__()
        self.times, self.kind = times, kind

    def append(self, report) -> None:
        self.times.add(self.kind, [report])


class Scratch:
    """The device tensors of one chunk, freed together."""

    def __init__(self, device):
        self.device, self.tensors = device, []

    def alloc(self, shape, fmt=BF16, zeroed: bool = False) -> DeviceTensor:
        """zeroed: every value zero, also on a device whose fresh allocations are not (a card)."""
        zero_it = zeroed and not self.device.capabilities.zeroes_allocations
        allocate = self.device.allocate_zeroed if zero_it else self.device.allocate
        self.tensors.append(allocate(tuple(shape), fmt))
        return self.tensors[-1]

    def upload(self, array, fmt) -> DeviceTensor:
        self.tensors.append(self.device.upload(np.ascontiguousarray(array), fmt))
        return self.tensors[-1]

    def write(self, tensor: DeviceTensor, array) -> None:
        """The whole array into a tensor the scratch holds (a mesh's: split by the tensor's placements)."""
        self.device.write(tensor, np.ascontiguousarray(array))

    def free(self) -> None:
        for t in self.tensors:
            self.device.free(t)
        self.tensors = []

    def take(self, tensors) -> "Scratch":
        """Those of `tensors` this scratch holds, moved to a scratch of their own (by identity)."""
        taken = Scratch(self.device)
        taken.tensors = [t for t in self.tensors if any(t is x for x in tensors)]
        self.tensors = [t for t in self.tensors if not any(t is x for x in taken.tensors)]
        return taken


class InputBuffer(Scratch):
    """The next chunk's input, uploaded while the current chunk runs: on a device with a transfer queue
    (`write_ahead`: TTDevice's second command queue) the write is issued there and the first program that reads
    the tensor waits for it; elsewhere (the simulator) it is written at once, the same bytes."""

    def upload(self, array, fmt) -> DeviceTensor:
        if not self.device.capabilities.transfer_queue:
            return super().upload(array, fmt)
        t = self.alloc(np.shape(array), fmt)
        self.write(t, array)
        return t

    def write(self, tensor: DeviceTensor, array) -> None:
        if not self.device.capabilities.transfer_queue:
            return super().write(tensor, array)
        self.device.write_ahead(tensor, np.ascontiguousarray(array))


@dataclass
class PrefetchedInput:
    """A chunk's embeddings already on the device (InputBuffer), for the request and position they were for."""

    state: ModelState
    start: int
    tokens: np.ndarray
    xs: list  # the Residuals split.embed made, one a micro-batch
    buffer: InputBuffer


@dataclass
class MicroBatch:
    """One micro-batch of a chunk (model/micro_batches.py): its residual stream and normed rows, its tokens' place
    in the chunk (`first`), the context it runs with (its own start and length, the request's pages) and the GDN
    checkpoint offsets that fall in it, counted from its own start."""

    x: object  # Residual
    normed: DeviceTensor
    first: int
    context: ChunkContext
    offsets: tuple[int, ...]


class PendingReads:
    """A chunk's host reads in flight: each issued right after its producer (on a device with a transfer queue,
    `read_ahead` starts it there, ordered after the programs so far), its host side (conversion, the checkpoint
    store) run where the data is needed, at wait(). The tensors read must stay unwritten until then: the stack
    holds them in the chunk's scratch, which no later program of the chunk writes. On the simulator the read
    itself happens at wait(), so a later overwrite would show up in the data."""

    def __init__(self, device):
        self.device, self._finish = device, []
        self.tensors: list = []  # the tensors read: held until wait()

    def issue(self, tensors, finish) -> None:
        if self.device.capabilities.transfer_queue:
            for t in tensors:
                self.device.read_ahead(t)
        self.tensors += tensors
        self._finish.append(finish)

    def wait(self) -> None:
        finish, self._finish = self._finish, []
        for f in finish:
            f()


class StartedChunk:
    """A chunk whose programs are issued and whose host reads are in flight (DeviceStack.start): of the chunk's
    tensors it holds only those read (start frees the rest at once: on a card the programs issued before the
    free still use them, and the queue runs any later user after them). finish() waits for the reads, stores
    the checkpoint states, frees the tensors read and returns what forward returns; abandon() frees them without
    the results (a request released before its chunk was collected)."""

    def __init__(self, held: Scratch, reads: PendingReads, result):
        self._scratch, self._reads, self._result = held, reads, result
        self.finished = False

    def finish(self):
        if self.finished:
            raise DeviceStackError("this chunk's results were taken already (finish) or dropped (abandon)")
        self.finished = True
        try:
            self._reads.wait()
            return self._result()
        finally:
            self._scratch.free()

    def abandon(self) -> None:
        if not self.finished:
            self.finished = True
            self._scratch.free()  # a card waits for any read still in flight before the memory is reused


def _set_states(state: ModelState, values: dict[int, tuple[np.ndarray, np.ndarray]]) -> None:
    """Host GDN states (layer -> (conv, recurrent), as read up) into `state`'s host tensors."""
    for i, (conv, rec) in values.items():
        state.conv_states[i] = torch.from_numpy(np.ascontiguousarray(conv, np.float32))
        state.recurrent_states[i] = torch.from_numpy(rec.reshape(state.recurrent_states[i].shape).copy())


def _no_pause() -> None:
    pass


class LayerRunner:
    """One layer's programs on device tensors: the piece the stack and the TTFT benchmark share."""

    def __init__(self, config: ModelConfig, device, *, gdn_chunk: int, gdn_fidelity: MathFidelity,
                 attention_fidelity: MathFidelity, times: OpTimes, split=None, matmul_fidelity=None):
        from ttprefill.model.tensor_parallel_device import OneChip
        from ttprefill.ops.attention import FlashAttentionConfig
        from ttprefill.ops.linear.fidelity import ProjectionFidelity

        self.config, self.device, self.times = config, device, times
        # how the chips' residual streams meet (model/tensor_parallel_device.py): the collective after each
        # row-parallel projection and, when the stream is split by tokens, the gather before the next block
        self.split = split if split is not None else OneChip(config)
        self.gdn_chunk, self.gdn_fidelity = gdn_chunk, gdn_fidelity
        self.attention_config = FlashAttentionConfig(math_fidelity=attention_fidelity)
        self.matmul_fidelity = matmul_fidelity if matmul_fidelity is not None else ProjectionFidelity()
        # Called at a block's phase points (after its gather, its first projection, its reduce-scatter), where
        # DeviceStack.forward lets another micro-batch issue its next piece (model/interleave.py); a no-op else.
        self.pause = _no_pause

    def r(self, kind):
        return _KindReports(self.times, kind)

    # ---- pieces
    def linear(self, s: Scratch, x, w, role: str):
        """role: which projection (ops/linear/fidelity.py's ROLES), for its math fidelity."""
        from ttprefill.ops.linear import linear

        return linear(self.device, x, w, s.alloc((x.shape[0], w.n_out)), fidelity=self.matmul_fidelity.of(role),
                      reports=self.r("matmul"))

    def norm(self, s: Scratch, x, w, **kw):
        from ttprefill.ops.norm import rms_norm

        return rms_norm(self.device, x, w, self.config.rms_norm_eps, reports=self.r("norms"), **kw)

    def residual(self, x, y):
        from ttprefill.ops.eltwise import residual_add

        residual_add(self.device, x, y, out=x, reports=self.r("rest"))

    def add_norm(self, x, y, w, out) -> None:
        """x += y and out = RMSNorm(x) * (1 + w), one program (ops/norm add_rms_norm); any rows."""
        from ttprefill.ops.norm import add_rms_norm

        add_rms_norm(self.device, x, y, w, self.config.rms_norm_eps, out=out, reports=self.r("norms"))

    def block_input(self, s: Scratch, x: "Residual", w, normed=None):
        """A block's RMSNorm of the chip's residual rows and, when the stream is split by tokens, the
        all_gather over the tokens that feeds the block's column-parallel projections: all T normed rows.
        normed: the rows already normed with w (by the add that ended the block before), so only the gather."""
        from ttprefill.model.tensor_parallel_device import first_rows

        if normed is None:  # in the format the gather carries (bf16 when nothing is gathered)
            normed = self.norm(s, x.rows, w, out=s.alloc(x.rows.shape, self.split.gather_format))
        gathered = first_rows(self.split.gather(s, normed), x.tokens)
        self.pause()
        return gathered

    def block_output(self, s: Scratch, x: "Residual", a, w, role: str, normed=None, next_norm=None) -> None:
        """A block's row-parallel projection a @ w, the collective that sums its partial outputs over the chips
        (all_reduce: all of it; reduce_scatter: the chip's rows of it), and the residual add into x's rows;
        with `normed` and `next_norm`, fused with the next block's RMSNorm of the new rows, into `normed`."""
        from ttprefill.model.tensor_parallel_device import first_rows
        from ttprefill.ops.linear import linear

        # The rows past a's are the padding of the reduce_scatter split: no program writes them, and they go
        # into the last chip's residual rows, so they must hold zeros.
        rows = self.split.padded_tokens(x.tokens)
        fmt = self.split.partial_format  # bfp8 partial sums are accumulated in fp32 and packed once
        partial = s.alloc((rows, w.n_out), fmt, zeroed=rows > a.shape[0])
        linear(self.device, a, w, first_rows(partial, a.shape[0]), out_format=fmt, fp32_acc=fmt is DataFormat.Bfp8_b,
               fidelity=self.matmul_fidelity.of(role), reports=self.r("matmul"))
        total = self.split.reduce(s, partial)
        self.pause()
        if normed is not None and next_norm is not None:
            self.add_norm(x.rows, total, next_norm, normed)
        else:
            self.residual(x.rows, total)

    # Blocks take `normed`, a [rows of x, hidden] buffer the chunk keeps: on entry it holds the block's input
    # norm of x's rows (the add that ended the block before wrote it), and the block's own add writes the next
    # block's into it: a mixer the MLP's post-attention norm, the MLP `next_norm` (the next layer's input norm;
    # None: a plain add, the buffer left stale). Without it a block norms its input itself and ends with a
    # plain add.
    def mlp_block(self, s: Scratch, x, lw: LayerWeights, normed=None, next_norm=None) -> None:
        from ttprefill.model.tensor_parallel_device import as_residual
        from ttprefill.ops.linear.swiglu import linear_swiglu

        x = as_residual(x)
        h = self.block_input(s, x, lw.post_norm, normed)
        # silu(h Wg^T) * (h Wu^T) in one program: the SwiGLU runs in the matmul's compute kernel
        act = linear_swiglu(self.device, h, lw.gate_up, s.alloc((h.shape[0], lw.down_proj.k_in)),
                            fidelity=self.matmul_fidelity.of("mlp_gate_up"), reports=self.r("matmul"))
        self.pause()
        self.block_output(s, x, act, lw.down_proj, "mlp_down", normed, next_norm)

    def gdn_block(self, s: Scratch, x, lw: LayerWeights, state: GdnDeviceState,
                  checkpoints: tuple[int, ...] = (), normed=None) -> "GdnCheckpointTensors | None":
        """checkpoints: token offsets in the chunk (whole GDN chunks inside it, and possibly T, its end) whose
        states the block leaves on the device, in s's tensors: the scan writes the recurrent states (at T the
        state it leaves, a second copy), and the conv state at offset p, the pre-conv rows p - 3 .. p - 1,
        comes out of the qkv projection (ops/layout's extract_rows: every checkpoint's rows into one tensor
        by one program), so each layer's checkpoints come up in two reads."""
        from ttprefill.model.tensor_parallel_device import as_residual
        from ttprefill.ops.gdn import allocate_scan_scratch, checkpoint_chunk_indices, layer_programs
        from ttprefill.ops.gdn.programs import LayerTensors
        from ttprefill.ops.gdn.shapes import HeadColumns, ScanShape
        from ttprefill.ops.layout import extract_rows

        cfg, w, x = self.config, lw.mixer, as_residual(x)
        T = x.tokens
        dims = cfg.gdn_dims
        inner = tuple(p for p in checkpoints if p != T)
        chunk_indices, _ = checkpoint_chunk_indices(inner, T, self.gdn_chunk)
        if len(chunk_indices) != len(inner) or list(checkpoints) != sorted(set(checkpoints)):
            raise DeviceStackError(f"GDN checkpoints {list(checkpoints)} must be ascending and lie inside the "
                                   f"chunk of {T} (or at its end)")
        if T in checkpoints:
            if T < state.conv.shape[0]:
                raise DeviceStackError(f"the state at the end of a chunk of {T} tokens holds conv rows from before "
                                       "it: read it with sync_to_host")
            chunk_indices.append(-(-T // self.gdn_chunk) - 1)  # the scan's last chunk: the state it leaves
        h = self.block_input(s, x, lw.input_norm, normed)
        # z, b and a from one projection: the gated norm reads z at its columns 0.., the gates b and a at theirs
        qkv, z = self.linear(s, h, w.in_qkv, "gdn_in"), self.linear(s, h, w.in_zba, "gdn_in")
        self.pause()  # the scan's tensors are made after it: another micro-batch's scan may swap `state` first
        b_tile, a_tile, _ = zba_columns(dims.v_heads, dims.value_dim)
        b, a = HeadColumns(z, b_tile), HeadColumns(z, a_tile)
        hv, C = dims.v_heads, dims.conv_channels
        scratch = allocate_scan_scratch(self.device, ScanShape.of(dims, T, self.gdn_chunk))
        s.tensors += [scratch.gate_vectors, scratch.records]
        t = LayerTensors(qkv=qkv, z=z, a=a, b=b, conv_state=state.conv, tap_weights=w.tap_weights,
                         dt_bias_rows=w.dt_bias_rows, a_log_rows=w.a_log_rows, norm_rows=w.norm_rows,
                         state=state.rec, mixed=s.alloc((T, C)), g=s.alloc((T, hv), FP32),
                         beta=s.alloc((T, hv), FP32), scratch=scratch, o=s.alloc((T, hv * dims.value_dim)),
                         y=s.alloc((T, hv * dims.value_dim)), conv_state_out=state.conv_next,
                         final_state=state.rec_next,
                         checkpoints=s.alloc((max(1, len(checkpoints)) * hv * dims.key_dim, dims.value_dim), FP32))
        reports = self.r("gdn")
        for program in layer_programs(self.device, dims, T, self.gdn_chunk, t, chunk_indices,
                                      fidelity=self.gdn_fidelity):
            reports.append(self.device.run(program))
        kept = None
        if checkpoints:
            width = state.conv.shape[0]
            rows = extract_rows(self.device, qkv, [p - width + r for p in checkpoints for r in range(width)],
                                reports=reports)
            s.tensors.append(rows.tensor)
            kept = GdnCheckpointTensors(tuple(checkpoints), rows, t.checkpoints)
        state.swap()
        self.block_output(s, x, t.y, w.out_proj, "gdn_out", normed, lw.post_norm)
        return kept

    def attention_block(self, s: Scratch, x, lw: LayerWeights, cache, table, context: ChunkContext,
                        rope_tables, normed=None) -> None:
        """rope_tables hold the chunk's positions (context.start ..), resident or the chunk's own."""
        from ttprefill.model.tensor_parallel_device import as_residual
        from ttprefill.ops.attention import flash_attention_program, kv_cache_write_program, plan_attention
        from ttprefill.ops.layout import merge_heads, split_heads
        from ttprefill.ops.rope import apply_rope

        cfg, w, x = self.config, lw.mixer, as_residual(x)
        T, p0 = x.tokens, context.start
        Hq, Hkv, D = cfg.attn_num_heads, cfg.attn_num_kv_heads, cfg.attn_head_dim
        h = self.block_input(s, x, lw.input_norm, normed)
        qkv = self.linear(s, h, w.qkv, "attention_in")
        self.pause()
        q = self.norm(s, qkv, w.q_norm, group_width=D, groups=Hq, group_stride=2 * D,
                      out=s.alloc((T, Hq * D)))
        k = self.norm(s, qkv, w.k_norm, group_width=D, groups=Hkv, group_stride=D, x_col0=Hq * 2 * D,
                      out=s.alloc((T, Hkv * D)))
        apply_rope(self.device, q, rope_tables, heads=Hq, position=p0, reports=self.r("rest"))
        apply_rope(self.device, k, rope_tables, heads=Hkv, position=p0, reports=self.r("rest"))
        entries = table.shape[0] * table.shape[1]
        plan = plan_attention(Hq, Hkv, D, T, p0, cache.data_format, True, self.attention_config, entries)
        rows = plan.q_rows_per_head
        layout = self.r("rest")
        q_h, gate_h, o_h = (s.alloc((Hq, rows, D)) for _ in range(3))
        k_h, v_h = (s.alloc((Hkv, -(-T // TILE) * TILE, D)) for _ in range(2))
        split_heads(self.device, q, q_h, heads=Hq, head_dim=D, reports=layout)
        split_heads(self.device, qkv, gate_h, heads=Hq, head_dim=D, head_stride=2 * D, col0=D, reports=layout)
        split_heads(self.device, k, k_h, heads=Hkv, head_dim=D, reports=layout)
        split_heads(self.device, qkv, v_h, heads=Hkv, head_dim=D, col0=Hq * 2 * D + Hkv * D, reports=layout)
        att = self.r("attention")
        att.append(self.device.run(kv_cache_write_program(self.device, cache, k_h, v_h, table, p0=p0,
                                                          max_cores=plan.config.max_cores)))
        att.append(self.device.run(flash_attention_program(self.device, q_h, cache, table, o_h, p0=p0, sq=T,
                                                           gate=gate_h, scale=attention_scale(cfg), plan=plan)))
        o = merge_heads(self.device, o_h, s.alloc((T, Hq * D)), reports=layout)
        self.block_output(s, x, o, w.o_proj, "attention_out", normed, lw.post_norm)

    def head_input(self, s: Scratch, x, final_norm) -> tuple[object, int]:
        """The rows the LM head reads and the last token's row among them: the final norm of the tile row that
        holds the chunk's last token. Split by tokens, every chip normalises the tile row at that token's place
        in its own rows and an all_gather of those tile rows hands every chip the owner's (adjacent to the LM
        head, which reads up to the owner's)."""
        from ttprefill.model.tensor_parallel_device import as_residual, first_rows

        x = as_residual(x)
        if not self.split.splits_tokens:
            row0 = (x.tokens - 1) // TILE * TILE
            h = self.norm(s, x.rows, final_norm, last_tile_row_only=True,
                          out=s.alloc((x.tokens - row0, x.rows.shape[1])))
            return h, x.tokens - 1 - row0
        owner, local = self.split.last_token_home(x.tokens)
        rows = local % TILE + 1  # of the tile row that holds the token, up to it
        slab = s.alloc((TILE, x.rows.shape[1]))
        self.norm(s, first_rows(x.rows, local + 1), final_norm, last_tile_row_only=True, out=first_rows(slab, rows))
        return first_rows(self.split.gather(s, slab), owner * TILE + rows), owner * TILE + rows - 1


class DeviceStack:
    """The model on one device, or tensor-parallel over every chip of a mesh (model/tensor_parallel_device.py:
    each chip runs one chip's programs on its share), or one pipeline stage's layers on one chip
    (model/pipeline_stack.py). forward() has HybridStack's contract for one chunk; state lives here."""

    lookahead = 1  # upcoming chunks forward takes: the next one's embeddings go down during this one

    def __init__(self, config: ModelConfig, weights: dict[str, np.ndarray], device, *, num_pages: int,
                 page_tokens: int, weight_format: str, gdn_chunk: int, gdn_fidelity: MathFidelity,
                 attention_fidelity: MathFidelity, page_format: DataFormat, matmul_fidelity=None,
                 tp_scheme: str | None = None, micro_batches: int = 1, collective_dtype=None,
                 layers: range | None = None):
        from ttprefill.model.micro_batches import check_micro_batches
        from ttprefill.model.collective_dtype import DEFAULT as DEFAULT_COLLECTIVE_DTYPE
        from ttprefill.model.tensor_parallel import DEFAULT_SCHEME
        from ttprefill.model.tensor_parallel_device import chip_split
        from ttprefill.ops.attention import KVCache
        from ttprefill.ops.linear import ChunkedDenseWeight

        from ttprefill.ops.linear.weight_formats import WeightFormatError, WeightFormats

        try:
            formats = WeightFormats.parse(weight_format)
        except WeightFormatError as error:
            raise DeviceStackError(str(error)) from None
        if page_tokens % TILE:
            raise DeviceStackError(f"pages of {page_tokens} tokens: the device keeps K/V in whole 32-token tiles")
        self.config, self.device = config, device
        # a chunk's micro-batches (model/micro_batches.py); refused here unless 1 or 2
        self.micro_batches = check_micro_batches(micro_batches)
        # The layers this stack holds and runs: all, or one pipeline stage's (model/pipeline_stack.py), whose
        # chunks start from the rows the stage before it ended with (forward's `rows`) and, but for the last
        # stage, end with the rows the next one takes (forward returns them) instead of logits.
        self.layer_range = _checked_layers(config, layers)
        self.first_stage = self.layer_range.start == 0
        self.last_stage = self.layer_range.stop == config.num_layers
        self.gdn_layers = [i for i in config.gdn_layers if i in self.layer_range]
        self.attention_layers = [i for i in config.attention_layers if i in self.layer_range]
        # what one chip holds and runs; `copies`: the chips an upload writes (a per-chip tensor's bytes times it)
        # tp_scheme: how a mesh's chips sum their partial outputs (model/tensor_parallel.py SCHEMES; None: its default);
        # collective_dtype: what the collectives carry (model/collective_dtype.py; None: its default)
        self.split = chip_split(config, device, tp_scheme or DEFAULT_SCHEME,
                                collective_dtype or DEFAULT_COLLECTIVE_DTYPE)
        self.chip_config, self.copies = self.split.chip_config, self.split.copies
        if len(self.layer_range) < config.num_layers and (self.split.chips > 1 or self.micro_batches > 1):
            raise DeviceStackError("a pipeline stage runs on one chip, whole chunks: give it a one-chip device and "
                                   "micro_batches=1")
        self.times, self.traffic, self.setup = OpTimes(), ChunkTraffic(), ChunkTraffic()
        self.rope = None
        self.models_time = device.capabilities.models_time
        # host gather, on the first stage only
        self.embed = np.asarray(weights["model.embed_tokens.weight"], np.float32) if self.first_stage else None
        self.src = WeightSource(device, weights, formats)
        chip, each_chip = self.chip_config, self.split.each_chip
        head_name = "model.embed_tokens.weight" if config.tie_word_embeddings else "lm_head.weight"
        try:
            # layer i's weights at self.layers[i - layer_range.start]
            self.layers = [each_chip(self.src, lambda s, i=i: layer_weights(s, chip, i)) for i in self.layer_range]
            self.final_norm = self.lm_head = None
            if self.last_stage:
                self.final_norm = each_chip(self.src, lambda s: s.norm(s.array("model.norm.weight")))
                self.lm_head = each_chip(self.src, lambda s: ChunkedDenseWeight.upload(
                    s.device, s.array(head_name), formats.lm_head))
                self.src.tensors.append(self.lm_head)
            self.kv = {i: KVCache.create(device, num_pages, page_tokens, chip.attn_num_kv_heads,
                                         chip.attn_head_dim, page_format) for i in self.attention_layers}
        except Exception:
            self.src.free()
            raise
        self.weight_bytes = sum(t.nbytes if isinstance(t, DeviceTensor) else _weight_nbytes(t)
                                for t in self.src.tensors)
        self.setup.add("down", "weights", self.weight_bytes * self.copies)
        self.runner = LayerRunner(chip, device, gdn_chunk=gdn_chunk, gdn_fidelity=gdn_fidelity,
                                  attention_fidelity=attention_fidelity, times=self.times, split=self.split,
                                  matmul_fidelity=matmul_fidelity)
        self._states: dict[int, tuple[ModelState, dict[int, GdnDeviceState]]] = {}  # id(state) -> its layers
        self._tables: dict[int, tuple[ModelState, object]] = {}  # id(state) -> its ResidentPageTable
        # id(state) -> the request's next chunk's embeddings, uploaded during its current chunk (the first of
        # forward's `upcoming`): the second input buffer
        self._prefetched: dict[int, PrefetchedInput] = {}
        # Host transfers beside the programs (GDN checkpoint reads finished at the chunk's end, the next chunk's
        # embeddings uploaded ahead); False: each read blocking right after its block, no upload ahead (the same
        # data either way, tests/test_host_overlap.py)
        self.overlap_transfers = True
        self.page_tokens = page_tokens
        if self.attention_layers:
            try:  # every position the K/V pages can hold
                self._upload_rope(num_pages * page_tokens)
            except Exception:
                self.free()
                raise
        # A card runs micro-batches' collectives on a sub-device of their own beside the programs' (TTDevice);
        # the simulator's collectives are timed apart from the programs, only the programs' grid changes there.
        if self.micro_batches > 1 and self.split.chips > 1 and hasattr(device, "open_sub_devices"):
            from ttprefill.device.sub_device_timing import compute_sub_device_cores

            try:
                device.open_sub_devices(compute_sub_device_cores()[1])
            except Exception:
                self.free()
                raise
            self._sub_devices = True

    @property
    def modeled_s(self) -> float:
        """The programs' modeled time and the collectives' (which do not overlap them: device/mesh.py)."""
        return self.times.total_s + self.collectives.seconds

    @property
    def collectives(self):
        return self.split.collectives

    # ---- state
    def _device_state(self, state: ModelState) -> dict[int, GdnDeviceState]:
        held = self._states.get(id(state))
        if held is not None and held[0] is state:
            return held[1]
        dev = {}
        for i in self.gdn_layers:
            conv = state.conv_states[i].numpy().astype(np.float32)
            rec = state.recurrent_states[i].numpy().astype(np.float32)
            conv_t, rec_t = self.split.upload_gdn_state(self.device, conv, rec)
            dev[i] = GdnDeviceState(conv_t, self.device.allocate(conv_t.shape, BF16),
                                    rec_t, self.device.allocate(rec_t.shape, FP32))
            self.traffic.add("down", "gdn_state_restore", (conv_t.nbytes + rec_t.nbytes) * self.copies)
        self._states[id(state)] = (state, dev)
        return dev

    def sync_to_host(self, state: ModelState) -> int:
        """Copies the GDN states of `state` from the device into its host tensors (a checkpoint); bytes moved."""
        values, moved = self._states_on_host(state)
        _set_states(state, values)
        return moved

    def _states_on_host(self, state: ModelState) -> tuple[dict[int, tuple[np.ndarray, np.ndarray]], int]:
        """The GDN states `state` has on the device now, read up: layer -> (conv, recurrent); bytes moved."""
        held = self._states.get(id(state))
        if held is None or held[0] is not state:
            return {}, 0
        values, moved = {}, 0
        for i, d in held[1].items():
            values[i] = self.split.download_gdn_state(self.device, d.conv, d.rec)
            moved += (d.conv.nbytes + d.rec.nbytes) * self.copies
        self.traffic.add("up", "gdn_checkpoint", moved)
        return values, moved

    def release(self, state: ModelState) -> None:
        ahead = self._prefetched.pop(id(state), None)
        if ahead is not None:
            ahead.buffer.free()
        held = self._states.pop(id(state), None)
        if held is not None:
            for d in held[1].values():
                for t in d.tensors():
                    self.device.free(t)
        table = self._tables.pop(id(state), None)
        if table is not None:
            table[1].free()

    def new_state(self) -> ModelState:
        return ModelState.empty(self.config)

    def free(self) -> None:
        for key in list(self._states):
            self.release(self._states[key][0])
        for key in list(self._tables):
            self.release(self._tables[key][0])
        for key in list(self._prefetched):
            self.release(self._prefetched[key].state)
        for cache in self.kv.values():
            cache.free()
        self.kv = {}
        if self.rope is not None:
            self.rope.free()
            self.rope = None
        self.src.free()
        if getattr(self, "_sub_devices", False):
            self.device.close_sub_devices()
            self._sub_devices = False

    # ---- one chunk
    def forward(self, tokens, state: ModelState, context: ChunkContext, need_logits: bool = True,
                sync_end: bool = False, upcoming: tuple[UpcomingChunk, ...] = (), rows: np.ndarray | None = None):
        """start(...).finish(): one chunk run and its results on the host."""
        return self.start(tokens, state, context, need_logits, sync_end, upcoming, rows).finish()

    @torch.no_grad()
    def start(self, tokens, state: ModelState, context: ChunkContext, need_logits: bool = True,
              sync_end: bool = False, upcoming: tuple[UpcomingChunk, ...] = (), rows: np.ndarray | None = None
              ) -> "StartedChunk":
        """Issues one chunk's programs and its host reads and advances `state`'s position; the chunk's results come
        with the returned StartedChunk's finish(), which the next chunk of the same state need not wait for (a
        pipeline stage goes on while the stage after it takes the rows). A state's chunks finish in the order they
        started.

        forward's results: the last token's logits [vocab] (fp32 torch) when
        need_logits, else None (the LM head then does not run). sync_end: also bring the GDN states the chunk
        leaves into `state`'s host tensors (what sync_to_host does), in the same reads as the checkpoints
        inside the chunk (a chunk shorter than the conv state reads them with sync_to_host). upcoming: the
        request's next chunks (the engine's look-ahead, model/stack.py UpcomingChunk); the first one's embeddings
        go down while this chunk runs (a later forward with other tokens or another start drops them and uploads
        its own).

        A pipeline stage (`layers` of a part of the model) past the first starts from `rows`, the [T, hidden]
        residual rows the stage before it ended the chunk with; a stage before the last returns the rows it ends
        the chunk with (fp32 values of the bf16 stream, for the next stage) instead of logits."""
        cfg = self.config
        tokens = np.asarray(tokens, np.int64).reshape(-1)
        T = len(tokens)
        if T != context.num_tokens or context.start != state.num_tokens:
            raise DeviceStackError(f"chunk of {T} tokens at {context.start} does not continue a state of "
                                   f"{state.num_tokens} tokens with a context of {context.num_tokens}")
        if (rows is None) != self.first_stage or (rows is not None and np.shape(rows) != (T, cfg.hidden_size)):
            raise DeviceStackError(
                f"layers {self.layer_range.start}..{self.layer_range.stop - 1}: " + (
                    "the first stage embeds the tokens itself; give no rows" if self.first_stage else
                    f"a later stage starts from the previous stage's rows: give rows of shape ({T}, "
                    f"{cfg.hidden_size}), got {None if rows is None else np.shape(rows)}"))
        if cfg.attention_layers and context.start % TILE:
            raise DeviceStackError(f"a chunk starts at position {context.start}: the device writes K/V in whole "
                                   f"32-token tiles, so chunks must start at multiples of {TILE}")
        if T and (tokens.min() < 0 or tokens.max() >= cfg.vocab_size):
            raise DeviceStackError(f"token ids must be in [0, {cfg.vocab_size})")
        states = self._device_state(state)
        offsets = tuple(context.checkpoint_offsets(self.runner.gdn_chunk))
        end_shared = sync_end and T >= cfg.gdn_conv_kernel - 1
        if end_shared:
            offsets += (T,)
        state.checkpoints = {p: ModelState(p) for p in context.checkpoints}
        bounds = self._micro_batch_bounds(T)
        s = Scratch(self.device)
        reads = PendingReads(self.device)
        try:
            with self._compute_grid():
                result = self._run_chunk(s, reads, tokens, state, context, states, offsets, bounds, end_shared,
                                         need_logits, sync_end, upcoming[0].tokens if upcoming else None, rows)
        except BaseException:
            s.free()
            raise
        held = s.take(reads.tensors)  # what the reads still need; the rest is freed now
        try:
            s.free()
        except BaseException:
            held.free()
            raise
        return StartedChunk(held, reads, result)

    def _run_chunk(self, s: Scratch, reads: PendingReads, tokens, state: ModelState, context: ChunkContext,
                   states: dict, offsets: tuple[int, ...], bounds, end_shared: bool, need_logits: bool,
                   sync_end: bool, next_tokens, rows):
        """forward's work once its checks are done: on the compute grid, its tensors in `s`."""
        T = len(tokens)
        if rows is None:
            xs = self._chunk_input(s, state, context.start, tokens, bounds)
        else:  # the stage before's rows (one micro-batch: a stage runs whole chunks)
            xs = [self.split.embed(s, np.asarray(rows, np.float32))]
            self.traffic.add("down", HANDOFF, xs[0].rows.nbytes)
        if next_tokens is not None and self.overlap_transfers and self.first_stage:
            self._prefetch(state, context.end, next_tokens)
        table = rope = None
        if self.attention_layers:
            table = self._page_table(state, context)
            rope = self._rope_tables(context)
        # Each micro-batch (one, or halves A and B) keeps its x and the next block's normed input (written by
        # the add + norm that ends each block but the last); each block's temporaries are freed when it ends.
        # A checkpoint at A's end is A's end state; B's GDN blocks start from the state A's left, its attention
        # reads A's K/V from the pages.
        batches = [MicroBatch(x, s.alloc(x.rows.shape, self.split.gather_format), first,
                              ChunkContext(context.start + first, n, context.page_table),
                              tuple(o - first for o in offsets if first < o <= first + n))
                   for x, (first, n) in zip(xs, bounds)]

        def layers(b: MicroBatch) -> None:
            self.runner.norm(s, b.x.rows, self.layers[0].input_norm, out=b.normed)
            for n, (i, lw) in enumerate(zip(self.layer_range, self.layers)):
                if self.config.is_attention_layer(i):
                    self._block(self.runner.attention_block, b.x, lw, self.kv[i], table, b.context, rope,
                                b.normed)
                else:
                    self._block(self._gdn_block, b.x, lw, states[i], i, b.offsets, state, s, reads, b.normed,
                                b.first, T)
                # the stage's (or the model's) last MLP ends with a plain add: the next norm is another stage's
                next_norm = self.layers[n + 1].input_norm if n + 1 < len(self.layers) else None
                self._block(self.runner.mlp_block, b.x, lw, b.normed, next_norm)

        # Two micro-batches are issued interleaved at the blocks' phase points, B half a block behind A
        # (model/interleave.py): B's blocks of a layer come after A's, so B's attention finds A's K/V in the
        # pages and B's scan the state A's left; on a mesh the programs keep the grid the collectives leave.
        interleaver = Interleaver()
        self.runner.pause = interleaver.pause
        try:
            interleaver.run([lambda b=b: layers(b) for b in batches])
        finally:
            self.runner.pause = _no_pause
        state.num_tokens += T
        if sync_end and not end_shared:  # read now, before a later chunk moves the states on; stored at finish
            values = self._states_on_host(state)[0]
            reads.issue((), lambda: _set_states(state, values))
        if not self.last_stage:  # the rows the next stage starts from, read beside the stage's next chunk
            x = batches[-1].x.rows
            self.traffic.add("up", HANDOFF, x.nbytes)
            out = []
            reads.issue((x,), lambda: out.append(self.device.download(x)[:T]))
            return lambda: out[0]
        logits = self._last_logits(s, batches[-1].x) if need_logits else None
        return lambda: logits

    def _compute_grid(self):
        """The worker grid a chunk's programs are planned on: with micro-batches on a mesh, the compute
        sub-device's (the collectives run beside the programs on the cores below it; a chunk too short to split
        runs there too); else the whole grid."""
        from contextlib import nullcontext

        from ttprefill.device.sub_device_timing import compute_sub_device_cores
        from ttprefill.hw import compute_sub_device

        if self.micro_batches < 2 or self.split.chips < 2:
            return nullcontext()
        return compute_sub_device(*compute_sub_device_cores())

    def _micro_batch_bounds(self, tokens: int) -> list[tuple[int, int]]:
        from ttprefill.model.micro_batches import micro_batch_bounds

        return micro_batch_bounds(tokens, self.micro_batches, self.runner.gdn_chunk)

    def _gdn_block(self, s: Scratch, x, lw: LayerWeights, dev_state: GdnDeviceState, layer: int,
                   offsets: tuple[int, ...], state: ModelState, chunk: Scratch, reads: PendingReads,
                   normed=None, first: int = 0, chunk_tokens: int | None = None) -> None:
        """A GDN block of the micro-batch `first` tokens into a chunk of `chunk_tokens` (the whole chunk: 0 and
        None); offsets count from the micro-batch's start. The states at the chunk's checkpoints come up into
        state.checkpoints, the one at its end (when asked for) into `state` itself, stored when the chunk finishes
        (StartedChunk.finish): read beside the later blocks, their tensors held until then (or read at once when
        overlap_transfers is off)."""
        kept = self.runner.gdn_block(s, x, lw, dev_state, offsets, normed)
        if kept is None:
            return
        start = state.num_tokens + first
        end = state.num_tokens + (x.tokens if chunk_tokens is None else chunk_tokens)
        checkpoints = state.checkpoints  # this chunk's: a later chunk may have started by the time they land

        def store(values: dict[int, tuple[np.ndarray, np.ndarray]]) -> None:
            for offset, (conv, rec) in values.items():
                checkpoint = state if start + offset == end else checkpoints[start + offset]
                checkpoint.conv_states[layer] = torch.from_numpy(conv)
                shape = state.recurrent_states[layer].shape
                checkpoint.recurrent_states[layer] = torch.from_numpy(rec.reshape(shape))

        self.traffic.add("up", "gdn_checkpoint", kept.nbytes * self.copies)
        if not self.overlap_transfers:
            # read now, stored at finish all the same: the end state goes into `state` itself, which a pipeline
            # stage's next chunk, started before this one finishes, would otherwise overwrite first
            values = self.split.download_checkpoints(self.device, kept)
            reads.issue((), lambda: store(values))
            return
        held = (kept.conv_rows.tensor, kept.recurrent)
        s.tensors = [t for t in s.tensors if not any(t is h for h in held)]  # by identity: the chunk frees them
        chunk.tensors += held
        reads.issue(held, lambda: store(self.split.download_checkpoints(self.device, kept)))

    def _chunk_input(self, s: Scratch, state: ModelState, start: int, tokens: np.ndarray, bounds) -> list:
        """The residual stream of each of the chunk's micro-batches (bounds: their first token and length): the
        embeddings uploaded ahead for it (their buffer joins the chunk's scratch), or uploaded now."""
        ahead = self._prefetched.pop(id(state), None)
        if ahead is not None and ahead.state is state and ahead.start == start and np.array_equal(ahead.tokens,
                                                                                                  tokens):
            s.tensors += ahead.buffer.tensors
            return ahead.xs
        if ahead is not None:
            ahead.buffer.free()
        return self._embed(s, tokens, bounds)

    def _embed(self, scratch: Scratch, tokens: np.ndarray, bounds) -> list:
        """Each micro-batch's embeddings as its residual stream: replicated, or each chip its rows of the
        micro-batch (reduce_scatter, which splits each micro-batch over the chips as it would a chunk)."""
        xs = [self.split.embed(scratch, self.embed[tokens[first:first + n]]) for first, n in bounds]
        for x in xs:
            self.traffic.add("down", "embeddings", x.rows.nbytes * self.copies)
        return xs

    def _prefetch(self, state: ModelState, start: int, tokens) -> None:
        """The request's next chunk's embeddings into a second input buffer, beside this chunk's programs (its
        last reader, the chunk before this one, is done)."""
        tokens = np.asarray(tokens, np.int64).reshape(-1)
        if not len(tokens) or tokens.min() < 0 or tokens.max() >= self.config.vocab_size:
            return  # nothing to upload ahead; its forward refuses bad ids
        buffer = InputBuffer(self.device)
        try:
            xs = self._embed(buffer, tokens, self._micro_batch_bounds(len(tokens)))
        except Exception:
            buffer.free()
            raise
        self._prefetched[id(state)] = PrefetchedInput(state, start, tokens, xs, buffer)

    def _page_table(self, state: ModelState, context: ChunkContext):
        """The request's resident page table, its entries up to the chunk's last page brought up to date (only
        the ones it does not hold yet are written, by the update program)."""
        from ttprefill.ops.attention import ResidentPageTable, check_page_table

        context.check_page_table(self.page_tokens)
        pages = list(context.page_table)
        check_page_table(self.kv[self.attention_layers[0]], pages, context.end)  # ids inside the pool
        held = self._tables.get(id(state))  # holding the state keeps its id from being reused
        if held is not None and not held[1].fits(len(pages)):  # a table of another size: the kernels' shape
            self._tables.pop(id(state))[1].free()
            held = None
        if held is None:
            held = self._tables[id(state)] = (state, ResidentPageTable(self.device, len(pages)))
        held[1].sync(pages, -(-context.end // self.page_tokens), reports=self.runner.r("rest"))
        return held[1].tensor

    def _block(self, run, *args) -> None:
        block = Scratch(self.device)
        try:
            run(block, *args)
        finally:
            block.free()

    def _upload_rope(self, positions: int) -> int:
        """RoPE tables of positions 0 .. positions - 1, resident (replacing any held); bytes uploaded."""
        from ttprefill.ops.rope import RopeTables

        if self.rope is not None:
            self.rope.free()
            self.rope = None
        self.rope = RopeTables.upload(self.device, np.arange(positions), self.config.rotary_dim,
                                      self.config.rope_theta)
        self.setup.add("down", "rope_tables", self.rope.nbytes * self.copies)
        return self.rope.nbytes * self.copies

    def _rope_tables(self, context: ChunkContext):
        """The resident tables, grown (re-uploaded for twice the positions, or the chunk's end if more) when a
        chunk reaches past them; the K/V pages bound a request's positions, so that happens only when the
        page table addresses more positions than the pool holds. A re-upload is counted in this chunk's
        traffic too (kind "rope_tables")."""
        if context.end > self.rope.end_position:
            grown = max(context.end, 2 * self.rope.end_position)
            self.traffic.add("down", "rope_tables", self._upload_rope(-(-grown // TILE) * TILE))
        return self.rope

    def _last_logits(self, s: Scratch, x) -> torch.Tensor:
        from ttprefill.ops.layout import extract_row
        from ttprefill.ops.linear import linear

        h, last = self.runner.head_input(s, x, self.final_norm)
        parts = []
        for chunk in self.lm_head.chunks:
            out = s.alloc((h.shape[0], chunk.n_out))
            linear(self.device, h, chunk, out, fidelity=self.runner.matmul_fidelity.lm_head,
                   reports=self.runner.r("matmul"))
            # only the last token's row comes up (bf16, row-major pages), not the tile row of 32 tokens
            row = extract_row(self.device, out, last, reports=self.runner.r("rest"))
            s.tensors.append(row.tensor)
            values, nbytes = self.split.download_row(self.device, s, row)  # on a mesh: the chips' rows gathered
            parts.append(values)
            self.traffic.add("up", "logits", nbytes)
        return torch.from_numpy(self.split.assemble_logits(parts).astype(np.float32))


def _checked_layers(config: ModelConfig, layers: range | None) -> range:
    """`layers` (all when None) if they are a non-empty step-1 run of the model's layers."""
    if layers is None:
        return range(config.num_layers)
    if not isinstance(layers, range) or layers.step != 1 or not 0 <= layers.start < layers.stop <= config.num_layers:
        raise DeviceStackError(f"layers must be a non-empty range(a, b) inside the model's {config.num_layers} "
                               f"layers, got {layers!r}")
    return layers


def _weight_nbytes(w) -> int:
    if hasattr(w, "chunks"):
        return sum(c.tensor.nbytes for c in w.chunks)
    if hasattr(w, "tensor"):
        return w.tensor.nbytes
    return w.rows.nbytes
