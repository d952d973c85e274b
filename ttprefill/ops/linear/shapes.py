"""The shape of a dense projection and the projections of a Qwen3.5 layer stack."""

from __future__ import annotations

from dataclasses import dataclass

from ttprefill.device.program import DataFormat
from ttprefill.hw import TILE

# in0 in bfp8: the normed rows a tensor-parallel gather carries in bfp8 (EngineOptions.collective_dtype); the
# factory's in0 CB takes the tensor's format and the unpacker converts.
ACTIVATION_FORMATS = (DataFormat.Float16_b, DataFormat.Bfp8_b)
WEIGHT_FORMATS = (DataFormat.Float16_b, DataFormat.Bfp8_b, DataFormat.Bfp4_b)
# out in bfp8: a row-parallel projection's partial sums for a bfp8 reduction. Only with fp32_acc: without it the
# factory keeps the partials between K blocks in the output's format (interm0), bfp8 at every K block.
OUTPUT_FORMATS = (DataFormat.Float16_b, DataFormat.Float32, DataFormat.Bfp8_b)


class LinearShapeError(ValueError):
    """A projection the dense op cannot run as asked; the message names the argument."""


@dataclass(frozen=True)
class LinearShape:
    """out [tokens, n_out] = x [tokens, k_in] @ W^T, W [n_out, k_in] (the checkpoint's layout)."""

    tokens: int
    k_in: int
    n_out: int
    weight_format: DataFormat = DataFormat.Float16_b
    out_format: DataFormat = DataFormat.Float16_b
    fp32_acc: bool = False  # fp32 DST accumulation (and fp32 partials between K blocks)
    in0_format: DataFormat = DataFormat.Float16_b  # x's format: what the unpacker reads per in0 tile (planner.py)

    def __post_init__(self):
        for name in ("tokens", "k_in", "n_out"):
            if getattr(self, name) < 1:
                raise LinearShapeError(f"{name} must be positive; got {getattr(self, name)}")
        if self.weight_format not in WEIGHT_FORMATS:
            raise LinearShapeError(f"weight_format {self.weight_format!r}: choose one of "
                                   f"{[f.name for f in WEIGHT_FORMATS]}")
        if self.in0_format not in ACTIVATION_FORMATS:
            raise LinearShapeError(f"in0_format {self.in0_format!r}: choose one of "
                                   f"{[f.name for f in ACTIVATION_FORMATS]}")
        if self.out_format not in OUTPUT_FORMATS:
            raise LinearShapeError(f"out_format {self.out_format!r}: choose one of {[f.name for f in OUTPUT_FORMATS]}")
        if self.out_format is DataFormat.Bfp8_b and not self.fp32_acc:
            raise LinearShapeError("a Bfp8_b output needs fp32_acc=True: without it the partial sums between K blocks "
                                   "are stored in bfp8 too")

    @property
    def mt(self) -> int:
        return -(-self.tokens // TILE)

    @property
    def kt(self) -> int:
        return -(-self.k_in // TILE)

    @property
    def nt(self) -> int:
        return -(-self.n_out // TILE)

    @property
    def flops(self) -> int:
        return 2 * self.tokens * self.k_in * self.n_out


def projection_shapes(config, tokens: int) -> dict[str, tuple[int, int]]:
    """(k_in, n_out) of every projection of one layer kind as the device stack runs it (model/device_stack.py
    layer_weights), plus the LM head. GDN: in_proj_qkv, in_proj_zba (z, b and a in one weight: z's HV V columns,
    then b and a each padded to a whole tile column), out_proj; attention: qkv_proj (q_proj's query and output
    gate, 2 D per head, then k_proj and v_proj in one weight), o_proj; MLP: gate_up_proj (gate_proj and up_proj in
    one weight, their tile columns paired, I rounded up to whole tiles: the SwiGLU program of swiglu.py, whose
    output is half as wide), down_proj."""
    from ttprefill.ops.gdn.shapes import zba_columns

    from .swiglu import paired_width

    del tokens  # the token count does not change the weight shapes; kept for a uniform call site
    h, d = config.hidden_size, config.attn_head_dim
    hq, hkv = config.attn_num_heads, config.attn_num_kv_heads
    return {
        "linear_attn.in_proj_qkv": (h, config.gdn_conv_channels),
        "linear_attn.in_proj_zba": (h, zba_columns(config.gdn_num_v_heads, config.gdn_value_head_dim)[2]),
        "linear_attn.out_proj": (config.gdn_value_dim, h),
        "self_attn.qkv_proj": (h, 2 * hq * d + 2 * hkv * d),
        "self_attn.o_proj": (hq * d, h),
        "mlp.gate_up_proj": (h, paired_width(config.intermediate_size)),
        "mlp.down_proj": (config.intermediate_size, h),
        "lm_head": (h, config.vocab_size),
    }
