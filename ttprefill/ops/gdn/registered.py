"""Representative GDN programs for the checks against the real ttnn (tests/host; ops/registry.py)."""

from __future__ import annotations

from ttprefill.ops.registry import build_device, register

from .programs import allocate_layer_tensors, layer_programs
from .shapes import GdnDims


def _offline_layer(tokens: int, dims: GdnDims, chunk: int, checkpoints: int = 0, fused: bool | None = False):
    """The layer core's programs on an offline device: conv, gates, gate vectors, then with fused=False
    the preparation and the sequential pass (indices 3 and 4), with fused=True the fused scan (3), with
    fused=None the scan layer_programs chooses (the pipelined one where it fits: 3)."""
    device = build_device()
    t = allocate_layer_tensors(device, dims, tokens, chunk, checkpoints)
    return layer_programs(device, dims, tokens, chunk, t, list(range(checkpoints)), fused=fused)


_SMALL = GdnDims(2, 4, 64, 64)
_QWEN = GdnDims(16, 48, 128, 128)


# name: (tokens, dims, chunk, checkpoints, fused, index of the program in _offline_layer's list)
_REGISTERED_LAYER_PROGRAMS = {
    "gdn/conv_T100_h2x4_k64v64": (100, _SMALL, 64, 0, False, 0),
    "gdn/gates_T100_hv4": (100, _SMALL, 64, 0, False, 1),
    "gdn/gate_vectors_T130_hv4_c64": (130, _SMALL, 64, 0, False, 2),
    "gdn/scan_prep_T130_h2x4_k64v64_c64": (130, _SMALL, 64, 0, False, 3),
    "gdn/scan_seq_T130_h2x4_k64v64_c32_ckpt": (130, _SMALL, 32, 2, False, 4),
    "gdn/norm_T100_hv4_v64": (100, _SMALL, 64, 0, False, 5),
    "gdn/scan_prep_T256_h16x48_k128v128_c128": (256, _QWEN, 128, 0, False, 3),
    "gdn/scan_seq_T256_h16x48_k128v128_c64": (256, _QWEN, 64, 0, False, 4),
    "gdn/scan_fused_T130_h2x4_k64v64_c32_ckpt": (130, _SMALL, 32, 2, True, 3),
    "gdn/scan_fused_T256_h16x48_k128v128_c64": (256, _QWEN, 64, 0, True, 3),
    "gdn/scan_pipelined_T130_h2x4_k64v64_c32_ckpt": (130, _SMALL, 32, 2, None, 3),
}


def _register_layer_program(name: str, tokens: int, dims: GdnDims, chunk: int, checkpoints: int, fused: bool | None,
                            index: int) -> None:
    register(name)(lambda: _offline_layer(tokens, dims, chunk, checkpoints=checkpoints, fused=fused)[index])


for _name, _spec in _REGISTERED_LAYER_PROGRAMS.items():
    _register_layer_program(_name, *_spec)
