"""Head relayouts between the token-major tensors of the projections and norms ([T, width], heads as
column ranges) and the heads-major tensors attention reads and writes ([H, rows, head_dim]), our own
data-movement kernels (kernels/layout/heads_copy_*.cpp): whole tiles copied DRAM to DRAM, no compute.

    split_heads    token-major columns -> heads-major (Q, the output gate, the chunk's K and V)
    merge_heads    heads-major -> token-major (attention's O, for o_proj)
    extract_row    one row of a tiled tensor as a row-major row (the last token's logits, row.py)
    extract_rows   rows of a tiled tensor into one row-major tensor (the GDN conv rows at checkpoints)

The same role as ttnn's nlp_create_qkv_heads / nlp_concat_heads; ours because those take a fused QKV
of one fixed layout, where Qwen3.5's q_proj interleaves each head's query and output gate and the
q/k norms already produce compact per-head rows.
"""

from .heads import HeadLayout, heads_copy_program, merge_heads, split_heads
from .row import DeviceRow, DeviceRows, RowExtractError, extract_row, extract_rows, row_extract_program

__all__ = ["DeviceRow", "DeviceRows", "HeadLayout", "RowExtractError", "extract_row", "extract_rows",
           "heads_copy_program", "merge_heads",
           "row_extract_program", "split_heads"]
