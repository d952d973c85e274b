"""Partial RoPE of the attention layers on the device, our own kernels (kernels/rope/rope_*.cpp).

The rotation is rotate_half over each head's first rotary_dim = partial_rotary_factor * head_dim
dims (64 of 256 for Qwen3.5); the rest of the head passes through. Qwen3.5's checkpoints configure
interleaved multimodal RoPE (mrope): the rotary frequencies are dealt round-robin to the temporal,
height and width position axes. For text every token's three position ids are equal, so each
frequency sees the same position whichever axis it is dealt to, and the rotation is exactly the
plain one with cat(freqs, freqs) that torch_ops.apply_partial_rope computes: that is what runs here.

Why our kernel: ttnn's rotary_embedding ops rotate the whole head (or take a transformation-matrix
matmul for the interleaved-pairs form); the partial rotation in place touches only the rotary
quarter of each head, a quarter of the traffic of a rotate-then-concatenate sequence.

Rotary widths of 16 or 32 (the tiny test model's 16 of 64) rotate inside each head's first tile: the
reader copies that tile with its two rotary halves exchanged (16-byte pieces moved inside the core's
L1), and the compute forms x * cos' + swapped * sin' with the signs and the pass-through columns in
the tables (rope.sub_tile_tables).

    shapes.py    RopeShape and the validation (rotary halves whole tiles, or a 16 / 32 rotary width)
    planner.py   units (token tile row x head) over the cores
    program.py   the Program (in place on x)
    rope.py      rope_tables (cos/sin in fp64 on the host, fp32 on the device) and apply_rope
"""

from .rope import RopeTables, apply_rope, rope_tables
from .shapes import RopeShape, RopeShapeError

__all__ = ["RopeShape", "RopeShapeError", "RopeTables", "apply_rope", "rope_tables"]
