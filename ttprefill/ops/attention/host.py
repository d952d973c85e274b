"""Flash attention with numpy in and numpy out (the device twin of
ttprefill.reference.attention.causal_attention)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ttprefill.device.program import DataFormat
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import MAX_CORES

from .cache import KVCache, check_page_table, upload_page_table
from .planner import AttentionPlan, _ceil_div, plan_attention
from .programs import flash_attention_program, kv_cache_write_program
from .shapes import SUPPORTED_HEAD_DIMS, TILE, FlashAttentionConfig, HeadCountError, HeadDimError, ShapeError


def heads_major(x: np.ndarray, rows: int) -> np.ndarray:
    """[S, H, D] -> [H, rows, D], zero rows after S."""
    s, h, d = x.shape
    out = np.zeros((h, rows, d), np.float32)
    out[:, :s] = np.asarray(x, np.float32).transpose(1, 0, 2)
    return out


def aligned_chunk_kv(x: np.ndarray, p0: int) -> np.ndarray:
    """[Sq, Hkv, D] -> [Hkv, rows, D] whose row r is position (p0 // 32) * 32 + r (zeros elsewhere)."""
    s = x.shape[0]
    shift = p0 % TILE
    rows = _ceil_div(shift + s, TILE) * TILE
    out = np.zeros((x.shape[1], rows, x.shape[2]), np.float32)
    out[:, shift:shift + s] = np.asarray(x, np.float32).transpose(1, 0, 2)
    return out


def _check_inputs(q, k_new, v_new, cache: KVCache, gate) -> tuple[int, int, int, int]:
    q, k_new, v_new = (np.asarray(x) for x in (q, k_new, v_new))
    if q.ndim != 3 or k_new.ndim != 3 or v_new.ndim != 3:
        raise ShapeError(f"q, k_new, v_new must be [S, heads, head_dim]; got {q.shape}, {k_new.shape}, {v_new.shape}")
    sq, hq, d = q.shape
    if k_new.shape != v_new.shape:
        raise ShapeError(f"k_new {k_new.shape} and v_new {v_new.shape} must have the same shape")
    if k_new.shape[0] != sq:
        raise ShapeError(f"k_new has {k_new.shape[0]} tokens but q has {sq}: the chunk's K/V are its own tokens'")
    hkv = k_new.shape[1]
    if hq % hkv:
        raise HeadCountError(f"query heads ({hq}) must be a multiple of kv heads ({hkv}) for grouped-query attention")
    if d not in SUPPORTED_HEAD_DIMS:
        raise HeadDimError(f"head_dim={d} is not supported; use one of {SUPPORTED_HEAD_DIMS}")
    if k_new.shape[2] != d:
        raise ShapeError(f"k_new/v_new have head_dim {k_new.shape[2]} but q has {d}")
    if hkv != cache.kv_heads or d != cache.head_dim:
        raise ShapeError(f"the chunk has {hkv} kv heads of head_dim {d} but the cache holds {cache.kv_heads} of "
                         f"{cache.head_dim}")
    if gate is not None and np.asarray(gate).shape != q.shape:
        raise ShapeError(f"gate has shape {np.asarray(gate).shape}; it must match q {q.shape}")
    return sq, hq, hkv, d


def write_kv_cache(device, cache: KVCache, k_new, v_new, page_table, p0: int, *,
                   table_tensor: DeviceTensor | None = None, max_cores: int = MAX_CORES):
    """Writes K/V [S, Hkv, D] of tokens [p0, p0 + S) into their cache pages; returns the run report."""
    k_new, v_new = np.asarray(k_new), np.asarray(v_new)
    if k_new.ndim != 3 or k_new.shape != v_new.shape:
        raise ShapeError(f"k_new {k_new.shape} and v_new {v_new.shape} must both be [S, kv_heads, head_dim]")
    if k_new.shape[1] != cache.kv_heads or k_new.shape[2] != cache.head_dim:
        raise ShapeError(f"K/V have {k_new.shape[1]} kv heads of head_dim {k_new.shape[2]} but the cache holds "
                         f"{cache.kv_heads} of {cache.head_dim}")
    if p0 < 0:
        raise ShapeError(f"p0={p0}: the first position cannot be negative")
    check_page_table(cache, page_table, p0 + k_new.shape[0])
    temps = []
    try:
        if table_tensor is None:
            table_tensor = upload_page_table(device, page_table)
            temps.append(table_tensor)
        k_t = device.upload(aligned_chunk_kv(k_new, p0), DataFormat.Float16_b)
        temps.append(k_t)
        v_t = device.upload(aligned_chunk_kv(v_new, p0), DataFormat.Float16_b)
        temps.append(v_t)
        return device.run(kv_cache_write_program(device, cache, k_t, v_t, table_tensor, p0=p0, max_cores=max_cores))
    finally:
        for t in temps:
            device.free(t)


@dataclass
class AttentionRun:
    """What flash_attention ran: the output and the two programs' reports."""

    out: np.ndarray
    write_report: object
    attention_report: object
    plan: AttentionPlan


def flash_attention(device, q, k_new, v_new, cache: KVCache, page_table, p0: int, *, gate=None,
                    scale: float | None = None, config: FlashAttentionConfig | None = None,
                    return_run: bool = False):
    """Causal attention of a chunk q [Sq, Hq, D] at positions [p0, p0 + Sq) over the cache's first p0
    tokens plus the chunk's own k_new / v_new [Sq, Hkv, D], which are written into the cache first.

    page_table: physical page per logical block of cache.page_tokens tokens, covering p0 + Sq tokens.
    gate [Sq, Hq, D] (optional): returns out * sigmoid(gate). Returns o [Sq, Hq, D] float32 (or an
    AttentionRun with the reports when return_run).
    """
    sq, hq, hkv, d = _check_inputs(q, k_new, v_new, cache, gate)
    check_page_table(cache, page_table, p0 + sq)
    if p0 < 0:
        raise ShapeError(f"p0={p0}: the chunk's first position cannot be negative")
    plan = plan_attention(hq, hkv, d, sq, p0, cache.data_format, gate is not None, config, len(list(page_table)))

    temps: list[DeviceTensor] = []
    try:
        table_t = upload_page_table(device, page_table)
        temps.append(table_t)
        write_report = write_kv_cache(device, cache, k_new, v_new, page_table, p0, table_tensor=table_t,
                                      max_cores=plan.config.max_cores)
        rows = plan.q_rows_per_head
        q_t = device.upload(heads_major(q, rows), DataFormat.Float16_b)
        temps.append(q_t)
        gate_t = None
        if gate is not None:
            gate_t = device.upload(heads_major(gate, rows), DataFormat.Float16_b)
            temps.append(gate_t)
        out_t = device.allocate((hq, rows, d), DataFormat.Float16_b)
        temps.append(out_t)
        program = flash_attention_program(device, q_t, cache, table_t, out_t, p0=p0, sq=sq, gate=gate_t, scale=scale,
                                          plan=plan)
        attention_report = device.run(program)
        out = device.download(out_t)[:, :sq].transpose(1, 0, 2).copy()
    finally:
        for t in temps:
            device.free(t)
    if return_run:
        return AttentionRun(out, write_report, attention_report, plan)
    return out
