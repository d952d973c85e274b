"""EngineOptions: every default of the engine in one place.

The demo, `ttprefill prefill`, the engine benchmarks and the README take their settings from here.
The device defaults are the ops' own (the GDN chunk and fidelity of ttprefill.ops.gdn, the attention
fidelity of ttprefill.ops.attention), so the engine runs exactly what the kernel benchmarks measure.
Torch-free, so the command line can show the defaults without loading the model code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.hw import DRAM_BYTES_PER_CHIP
from ttprefill.model.micro_batches import MicroBatchError, check_micro_batches
from ttprefill.model.collective_dtype import DEFAULT as DEFAULT_COLLECTIVE_DTYPE
from ttprefill.model.collective_dtype import CollectiveDtype
from ttprefill.model.pipeline_split import (
    DEFAULT_PARALLEL,
    PIPELINE,
    PIPELINE_CHUNK_TOKENS,
    PipelineSplitError,
    check_parallel,
)
from ttprefill.model.tensor_parallel import DEFAULT_SCHEME, SCHEMES
from ttprefill.ops.attention import PAGE_FORMATS, FlashAttentionConfig
from ttprefill.ops.gdn import DEFAULT_CHUNK, MAX_CHECKPOINTS_PER_CALL, SCAN_FIDELITY
from ttprefill.ops.linear.fidelity import ProjectionFidelity
from ttprefill.ops.linear.weight_formats import FORMATS as FORMAT_NAMES
from ttprefill.ops.linear.weight_formats import WeightFormatError, WeightFormats


# The command line's names of the K/V page formats (`--kv-format`): the formats' names (weight_formats.FORMATS, their
# one home) of the attention kernels' PAGE_FORMATS.
KV_PAGE_FORMAT_NAMES = {name: fmt for name, fmt in FORMAT_NAMES.items() if fmt in PAGE_FORMATS}
assert set(KV_PAGE_FORMAT_NAMES.values()) == set(PAGE_FORMATS)


def kv_page_format_name(page_format: DataFormat) -> str:
    """The command line's name of a K/V page format ("bf16" or "bfp8")."""
    return next(name for name, fmt in KV_PAGE_FORMAT_NAMES.items() if fmt == page_format)


class EngineError(ValueError):
    """A request or setting the engine refuses; the message names the problem and the fix."""


# Tokens per device chunk when EngineOptions.chunk_tokens is not given, on one chip and under the tensor-parallel
# split (EngineOptions' chunk policy comment says why); the pipeline split's own: pipeline_split.PIPELINE_CHUNK_TOKENS.
DEFAULT_CHUNK_TOKENS = 2048


@dataclass(frozen=True)
class EngineOptions:
    # Chunk policy. A request's uncached tokens run in chunks of chunk_tokens (the last one ragged; a
    # prompt shorter than a chunk is one chunk). GDN checkpoints do not cut chunks: a chunk that crosses
    # checkpoint positions takes their states inside it (the scan writes states at its chunk boundaries), so
    # the prefix cache keeps the same checkpoints and hit rate at any chunk size. Every chunk re-reads every
    # weight from DRAM, so larger chunks win until compute dominates. Measured, `ttprefill bench ttft --model
    # qwen3.5-9b --seq 8192 --timing-only --chunk N` (one chip, bfp8, central, timing model 2.4 at d78f671,
    # with the in-chunk checkpoints; modeled): 256 3.30 s, 512 1.91 s, 1024 1.63 s, 2048 1.57 s, 4096 1.56 s,
    # the matmuls 2.57, 1.40, 1.19, 1.17, 1.16 s; the memory plan's activations of a chunk (the largest block's
    # working set, a checkpoint at every block inside) 0.03, 0.07, 0.14, 0.27, 0.55 GB of the chip's 12.9,
    # the weights taking 8.5. Past 2048 the weight reads are no longer what costs: 4096 saves 0.9 % (at 32k
    # on an n300, `--mesh 1x2 --seq 32768`, mesh timing 4: 4.49 s against 4.40 s, 2.1 %) for twice the working
    # set and twice the time a step holds the device from other requests. None (not given): that default,
    # DEFAULT_CHUNK_TOKENS, or under the pipeline split its own (pipeline_split.PIPELINE_CHUNK_TOKENS: a pipeline
    # also pays (stages - 1) chunks' time to fill and drain); `tokens_per_chunk` is the size in force.
    chunk_tokens: int | None = None
    block_tokens: int = 64  # prefix-cache block = attention page
    # GDN checkpoint every N blocks (and at each prompt's end). 4 keeps all but 4 points of the hit rate of
    # every block at half its memory (`ttprefill bench checkpoints`, README).
    checkpoint_every_blocks: int = 4
    cache_budget_bytes: int = 256 << 20  # device bytes for pages + device-tier checkpoints
    host_budget_bytes: int = 1 << 30  # spilled checkpoints
    # Tokens all requests together compute in one engine step (earlier requests first). None: one full chunk,
    # so one long request runs at chunk_tokens and several short ones share a step. It may be larger (several
    # chunks a step) but not smaller than chunk_tokens, or it would be the chunk size.
    token_budget_per_step: int | None = None
    gdn_chunk: int = DEFAULT_CHUNK
    gdn_fidelity: MathFidelity = SCAN_FIDELITY
    attention_fidelity: MathFidelity = FlashAttentionConfig.math_fidelity
    # The attention layers' K/V cache pages (the prefix cache's pages): bf16, or bfp8_b (`--kv-format bfp8`), which
    # nearly halves the bytes a page takes in DRAM and in the cache budget, and those attention reads of a long prefix.
    # Its accuracy and modeled gain: README (K/V pages in bfp8).
    kv_page_format: DataFormat = DataFormat.Float16_b
    # Device weight matrices: "bfp8" (bfp8_b tiles: 1,088 bytes a tile, so qwen3.5-9b fits one chip) or
    # "bf16". Accuracy allows bfp8: last-token logits of the tiny model (150 tokens, two chunks) against the
    # fp64 reference, PCC 0.99992 / rel RMS 0.0134 with bfp8 vs 0.99995 / 0.0105 with bf16 (README, device
    # section). Norm weights, GDN vectors, RoPE tables and the host embedding are never bfp8.
    # Per projection role over a base: "bfp8,mlp_gate_up=bfp4" (bfp4_b, 576 bytes a tile: tt-metal's Qwen3.5
    # demo's gate/up weights); the roles and formats: ops/linear/weight_formats.py; `weight_formats` parses it.
    weight_format: str = "bfp8"
    # Math fidelity of each projection (MLP gate/up and down, GDN and attention in/out, LM head); the defaults and
    # the accuracy they were chosen by are ttprefill.ops.linear.fidelity's.
    matmul_fidelity: ProjectionFidelity = ProjectionFidelity()
    # On a mesh (the device stack split tensor-parallel): how the chips sum a row-parallel projection's partial
    # outputs. "all_reduce": the residual stream replicated, one all_reduce each; "reduce_scatter": the stream
    # split by tokens (sequence parallel), a reduce_scatter each and an all_gather of the normed rows before the
    # next block (model/tensor_parallel_device.py). The default and why: model/tensor_parallel.py DEFAULT_SCHEME.
    tp_scheme: str = DEFAULT_SCHEME
    # On a mesh: the format each kind of collective carries, "gather" (the normed rows) and "reduce" (the partial
    # sums), each bf16 or bfp8; the defaults and the accuracy they were chosen by: model/collective_dtype.py.
    collective_dtype: CollectiveDtype = DEFAULT_COLLECTIVE_DTYPE
    # The device stack runs each chunk as this many micro-batches (1 or 2), interleaved block by block, so that on
    # a mesh one half's collectives can run beside the other half's programs; the halves compute what two chunks
    # of half the size would (model/micro_batches.py: how a chunk splits, and when it runs whole).
    micro_batches: int = 1
    # How a mesh's chips share the model (model/pipeline_split.py): "tensor", every chip a share of every layer
    # (the collectives above apply), or "pipeline", every chip a stage of whole layers, the residual rows passed
    # from stage to stage through the host, the stages running different chunks of a prompt at once
    # (model/pipeline_stack.py). The default and why: pipeline_split.DEFAULT_PARALLEL.
    parallel: str = DEFAULT_PARALLEL

    def __post_init__(self):
        # Checked here so that the Python API and the CLI refuse the same bad values with the same words.
        for name in ("chunk_tokens", "block_tokens", "checkpoint_every_blocks", "cache_budget_bytes",
                     "host_budget_bytes", "token_budget_per_step", "gdn_chunk"):
            value = getattr(self, name)
            if name in ("token_budget_per_step", "chunk_tokens") and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise EngineError(f"EngineOptions.{name} must be a positive integer, got {value!r}")
        if self.cache_budget_bytes > DRAM_BYTES_PER_CHIP:
            raise EngineError(
                f"EngineOptions.cache_budget_bytes = {self.cache_budget_bytes} is more than a Wormhole chip's "
                f"{DRAM_BYTES_PER_CHIP} bytes of DRAM, where the K/V pages live; give at most that")
        for name in ("gdn_fidelity", "attention_fidelity"):
            if not isinstance(getattr(self, name), MathFidelity):
                raise EngineError(f"EngineOptions.{name} must be a MathFidelity (LoFi, HiFi2, HiFi3, HiFi4), "
                                  f"got {getattr(self, name)!r}")
        if not isinstance(self.matmul_fidelity, ProjectionFidelity):
            raise EngineError("EngineOptions.matmul_fidelity must be a ProjectionFidelity "
                              "(ttprefill.ops.linear.fidelity; ProjectionFidelity.parse('LoFi') or "
                              f"'mlp_gate_up=LoFi,...'), got {self.matmul_fidelity!r}")
        if self.tp_scheme not in SCHEMES:
            raise EngineError(f"EngineOptions.tp_scheme must be one of {', '.join(SCHEMES)}, got {self.tp_scheme!r}")
        try:
            check_parallel(self.parallel)
        except PipelineSplitError as error:
            raise EngineError(f"EngineOptions.{error}") from None
        if self.parallel != DEFAULT_PARALLEL and self.micro_batches > 1:
            raise EngineError("EngineOptions.micro_batches 2 hides a tensor-parallel split's collectives; the "
                              f"{self.parallel} split has none: give micro_batches=1 with it")
        try:
            check_micro_batches(self.micro_batches)
        except MicroBatchError as error:
            raise EngineError(f"EngineOptions.{error}") from None
        if not isinstance(self.collective_dtype, CollectiveDtype):
            raise EngineError("EngineOptions.collective_dtype must be a CollectiveDtype (ttprefill.model.collective_dtype;"
                              " CollectiveDtype.parse('bfp8') or 'gather=bfp8,reduce=bf16'), got "
                              f"{self.collective_dtype!r}")
        if self.kv_page_format not in PAGE_FORMATS:
            raise EngineError(f"EngineOptions.kv_page_format must be one of "
                              f"{', '.join(f.name for f in PAGE_FORMATS)} (the attention kernels' page formats), "
                              f"got {self.kv_page_format!r}")
        try:
            WeightFormats.parse(self.weight_format)
        except WeightFormatError as error:
            raise EngineError(f"EngineOptions.weight_format: {error}") from None
        if self.tokens_per_chunk % self.gdn_chunk or self.block_tokens % self.gdn_chunk:
            raise EngineError(f"chunk_tokens ({self.tokens_per_chunk}) and block_tokens ({self.block_tokens}) must be "
                              f"multiples of the GDN chunk ({self.gdn_chunk})")
        if self.step_token_budget < self.tokens_per_chunk:
            raise EngineError(f"token_budget_per_step ({self.token_budget_per_step}) is below chunk_tokens "
                              f"({self.tokens_per_chunk}), so it would cap every chunk: lower chunk_tokens instead, or "
                              "leave the budget at None (one chunk a step)")
        # a chunk may carry a checkpoint at every block boundary inside it, and one scan call writes them all
        if self.tokens_per_chunk // self.block_tokens - 1 > MAX_CHECKPOINTS_PER_CALL:
            raise EngineError(f"chunk_tokens ({self.tokens_per_chunk}) spans more than {MAX_CHECKPOINTS_PER_CALL + 1} "
                              f"blocks of {self.block_tokens}, more checkpoints than one GDN scan call writes; "
                              "use a smaller chunk or larger blocks")

    @property
    def weight_formats(self) -> WeightFormats:
        """weight_format read: each projection role's weight tile format."""
        return WeightFormats.parse(self.weight_format)

    @property
    def tokens_per_chunk(self) -> int:
        """chunk_tokens resolved: the one given, or the split's default (the comment on chunk_tokens)."""
        if self.chunk_tokens is not None:
            return self.chunk_tokens
        return PIPELINE_CHUNK_TOKENS if self.parallel == PIPELINE else DEFAULT_CHUNK_TOKENS

    @property
    def step_token_budget(self) -> int:
        """token_budget_per_step resolved: None is one full chunk."""
        return self.tokens_per_chunk if self.token_budget_per_step is None else self.token_budget_per_step
