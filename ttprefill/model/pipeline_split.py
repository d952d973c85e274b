"""How a mesh's chips share the model: tensor-parallel (every chip a share of every layer) or pipeline-parallel
(every chip a run of whole layers, a stage).

Pipeline stages are contiguous runs of layers of equal count where the count divides (Qwen3.5-9B's 32 layers in 2
stages of 16, Qwen3.5-27B's 64 in 8 of 8: each stage then holds the same mix of GDN and attention layers, since
the models repeat a 4-layer pattern); otherwise the first stages take one layer more. A stage holds its layers'
weights, K/V pages and GDN states; the first also embeds the tokens, the last also runs the final norm and the LM
head. Torch-free: the options and the memory plan read it.
"""

from __future__ import annotations

TENSOR, PIPELINE = "tensor", "pipeline"
# How the chips of a mesh share the model (EngineOptions.parallel). "tensor" stays the default: it is what the
# card path has been checked with longest, and one chip's programs see every request at once; "pipeline" wins on
# one long prompt (README, "Pipeline stages").
PARALLEL_MODES = (TENSOR, PIPELINE)
DEFAULT_PARALLEL = TENSOR
# Tokens per device chunk under the pipeline split when EngineOptions.chunk_tokens is not given. A pipeline of n
# stages that each take about as long on a chunk takes the chunks' time plus (n - 1) times the longest chunk's
# (a proportionate flow shop's makespan), so a smaller first or last chunk alone does not shorten the fill and
# drain (9B on 1x2 at 4k with its last 1024 tokens as two chunks of 512: 0.527 s against 0.511), and chunks
# smaller than one chip's 2048 pay off until the weights re-read per chunk cost more than the fill saves.
# Measured, `ttprefill bench ttft --model M --mesh RxC --seq 32768 --parallel pipeline --chunk N --timing-only
# --json` (bfp8, central, timing model 2.4, mesh timing 5; modeled): Qwen3.5-27B on eight
# stages (2x4) 512 3.78 s, 768 3.70 s, 1024 3.66 s, 2048 4.43 s; Qwen3.5-9B on two (1x2) 1024 3.77 s,
# 2048 3.78 s.
PIPELINE_CHUNK_TOKENS = 1024


class PipelineSplitError(ValueError):
    """A pipeline split that cannot be made; the message names the sizes that work."""


def check_parallel(mode: str) -> str:
    if mode not in PARALLEL_MODES:
        raise PipelineSplitError(f"parallel must be one of {', '.join(PARALLEL_MODES)}, got {mode!r}")
    return mode


def stage_layers(num_layers: int, stages: int) -> list[range]:
    """The layers of each of `stages` stages, in order: contiguous, as equal in count as they can be."""
    if stages < 1:
        raise PipelineSplitError(f"a pipeline has at least one stage, got {stages}")
    if stages > num_layers:
        raise PipelineSplitError(f"{stages} stages for {num_layers} layers: a stage holds at least one layer; "
                                 f"use a mesh of at most {num_layers} chips, or the tensor-parallel split")
    base, extra = divmod(num_layers, stages)
    ranges, start = [], 0
    for k in range(stages):
        n = base + (k < extra)
        ranges.append(range(start, start + n))
        start += n
    return ranges


def check_pipeline_settings(micro_batches: int | None = None, fused_collectives: str = "none", scheme=None,
                            collective_dtype=None, topology: str | None = None) -> None:
    """Refuses, naming the flag, a tensor-parallel split's setting given with the pipeline split (None: not
    given): the pipeline split has no collectives for them to shape."""
    if micro_batches is not None and micro_batches > 1:
        raise PipelineSplitError("--micro-batches 2 hides a tensor-parallel split's collectives; the pipeline split "
                                 "has none: leave it out with --parallel pipeline")
    if fused_collectives != "none":
        raise PipelineSplitError(f"--fused-collectives {fused_collectives} times a tensor-parallel split's matmul + "
                                 "collective pairs; the pipeline split has no collectives: leave it out with "
                                 "--parallel pipeline")
    for flag, value in (("--scheme", scheme), ("--collective-dtype", collective_dtype)):
        if value is not None:
            raise PipelineSplitError(f"{flag} sets a tensor-parallel split's collectives; the pipeline split has "
                                     "none: leave it out with --parallel pipeline")
    if topology is not None:
        raise PipelineSplitError(f"--topology {topology} is the fabric a tensor-parallel split's collectives run on; "
                                 "the pipeline split runs none and opens the mesh without a fabric: leave it out with "
                                 "--parallel pipeline")
