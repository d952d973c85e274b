"""Representative head relayouts for the checks against the real ttnn (tests/host; ops/registry.py)."""

from __future__ import annotations

from ttprefill.device.program import DataFormat, Program
from ttprefill.ops.registry import build_device, register

from .heads import HeadLayout, heads_copy_program
from .row import DeviceRow, DeviceRows, row_extract_program, rows_extract_program


@register("layout/split_q_T256_h16_d256")
def _split_query_halves() -> Program:
    """Qwen3.5-9B's queries out of the fused q|gate|k|v projection (every other head of 256)."""
    device = build_device()
    src = device.allocate((256, 16 * 2 * 256 + 2 * 4 * 256), DataFormat.Float16_b)
    dst = device.allocate((16, 256, 256), DataFormat.Float16_b)
    return heads_copy_program(src, HeadLayout.token_major(src, 8, head_stride=16), dst, HeadLayout.heads_major(dst),
                              token_tiles=8, heads=16, head_tiles=8)


@register("layout/row_extract_w32768")
def _last_logits_row() -> Program:
    """The last token's row of one LM head chunk of logits (32768 columns, a tile row of 1024 tiles)."""
    device = build_device()
    src = device.allocate((32, 32768), DataFormat.Float16_b)
    return row_extract_program(src, 31, DeviceRow.allocate(device, 32768))


@register("layout/row_extract_w8192_x24")
def _checkpoint_conv_rows() -> Program:
    """Qwen3.5-9B's GDN conv rows at a 2048-token chunk's eight checkpoints (every 256 tokens, the end's
    included): three pre-conv rows of 8192 channels before each, into one tensor."""
    device = build_device()
    src = device.allocate((2048, 8192), DataFormat.Float16_b)
    rows = [p - 3 + r for p in range(256, 2049, 256) for r in range(3)]
    dst = DeviceRows.allocate(device, 8192, len(rows))
    return rows_extract_program(src, rows, dst.tensor, dst.width)
