"""The data format each kind of tensor-parallel collective carries (EngineOptions.collective_dtype).

Two kinds, each "bf16" or "bfp8" (Bfp8_b tiles: 1,088 bytes a tile against bf16's 2,048):

    gather   the normed residual rows the reduce_scatter scheme all-gathers before a block's column-parallel
             projections: the RMSNorm (alone, or fused with the residual add) writes them in this format, the
             all_gather moves them as they are, the projections read them as in0.
    reduce   the partial sums a row-parallel projection leaves for the reduction (reduce_scatter, or all_reduce
             under that scheme): the projection writes them in this format (bfp8 with fp32 accumulation), the
             collective sums them in it (every partial stored in the format: device/mesh.py), the residual add
             reads the result.

What ttnn 0.81.1 does with them (docs/TIMING.md and device/mesh.py cite the files): all_gather takes any dtype
and copies pages; reduce_scatter and all_reduce take BFLOAT16, BFLOAT8_B and FLOAT32 and keep the input dtype.
tt-metal's tt_transformers runs its collectives in bfloat8_b through ModelArgs.ccl_dtype on 2-D (Galaxy) meshes
only; on a line it keeps bf16: a choice of that model, not a limit of the ops.

On one chip, and for the gather under the all_reduce scheme (which gathers nothing), the rows stay bf16.
The default and the accuracy and time it was chosen by: DEFAULT below.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.program import DataFormat

FORMATS = {"bf16": DataFormat.Float16_b, "bfp8": DataFormat.Bfp8_b}
KINDS = ("gather", "reduce")


class CollectiveDtypeError(ValueError):
    """A collective dtype setting that is not one; the message names the choices."""


@dataclass(frozen=True)
class CollectiveDtype:
    gather: str = "bfp8"
    reduce: str = "bfp8"

    def __post_init__(self):
        for kind in KINDS:
            value = getattr(self, kind)
            if value not in FORMATS:
                raise CollectiveDtypeError(f"collective dtype {kind}={value!r}: choose one of {', '.join(FORMATS)}")

    def format(self, kind: str) -> DataFormat:
        if kind not in KINDS:
            raise CollectiveDtypeError(f"unknown collective kind {kind!r}; choose one of {', '.join(KINDS)}")
        return FORMATS[getattr(self, kind)]

    @classmethod
    def parse(cls, text: str) -> "CollectiveDtype":
        """'bfp8' (both kinds), or 'gather=bfp8,reduce=bf16' (kinds not named keep DEFAULT's)."""
        text = str(text).strip()
        if text in FORMATS:
            return cls(text, text)
        values = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            kind, sep, value = part.partition("=")
            if not sep or kind.strip() not in KINDS:
                raise CollectiveDtypeError(
                    f"cannot read collective dtype {text!r}: give one of {', '.join(FORMATS)} for both kinds, or "
                    f"kind=dtype pairs separated by commas, kinds {', '.join(KINDS)} (e.g. gather=bfp8,reduce=bf16)")
            values[kind.strip()] = value.strip()
        return cls(**{**{k: getattr(DEFAULT, k) for k in KINDS}, **values})

    def __str__(self) -> str:
        return ",".join(f"{k}={getattr(self, k)}" for k in KINDS)


# bfp8 for both, by measurement. Accuracy (`python -m ttprefill.bench.collective_accuracy`, simulated numerics):
# the tiny model's last-token logits (150 tokens, chunks of 64, SimMesh 1x2, reduce_scatter) against transformers
# in fp64, relative RMS 0.0146 (both bf16), 0.0152 (gather bfp8), 0.0161 (reduce bfp8), 0.0156 (both bfp8), one
# chip 0.0147, the engine's bound 0.03; per projection at hidden 4096 against fp64: a column-parallel projection
# (bfp8 weights) 0.0118 with a bf16 in0, 0.0131 with bfp8; a two-chip reduce-scatter of down_proj-like partials
# 0.0127 in bf16, 0.0135 in bfp8. Time (`ttprefill bench ttft --model qwen3.5-9b --mesh 1x2 --seq 32768
# --timing-only --json --collective-dtype D`, central, timing model 2.4, mesh timing 4, modeled): TTFT 5.47 s
# (bf16), 5.01 (gather bfp8), 4.95 (reduce bfp8), 4.49 (both): the collectives 1.78 -> 1.35 -> 0.91 s (1,088-byte
# pages, four a fabric packet), the matmuls 2.42 -> 2.34 s (half the in0 and partial-sum bytes, despite the
# partials' fp32 accumulation).
DEFAULT = CollectiveDtype("bfp8", "bfp8")
