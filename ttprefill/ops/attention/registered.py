"""Representative attention programs for the checks against the real ttnn (tests/host; ops/registry.py)."""

from __future__ import annotations

from ttprefill.device.program import DataFormat, Program

from ttprefill.ops.registry import build_device, register

from .cache import KVCache, page_table_tensor_shape
from .page_table import PAGE_IDS_PER_DISPATCH, page_table_update_program
from .planner import _ceil_div, plan_attention
from .programs import flash_attention_program, kv_cache_write_program
from .shapes import TILE


def _registered(hq: int, hkv: int, d: int, sq: int, p0: int, page_format: DataFormat, gated: bool = False) -> Program:
    device = build_device()
    page_tokens = 64
    pages = _ceil_div(p0 + sq, page_tokens) + 1
    cache = KVCache.create(device, pages, page_tokens, hkv, d, page_format)
    table = device.allocate(page_table_tensor_shape(pages), DataFormat.UInt32)
    plan = plan_attention(hq, hkv, d, sq, p0, page_format, gated, table_entries=pages)
    rows = plan.q_rows_per_head
    q = device.allocate((hq, rows, d), DataFormat.Float16_b)
    out = device.allocate((hq, rows, d), DataFormat.Float16_b)
    gate = device.allocate((hq, rows, d), DataFormat.Float16_b) if gated else None
    return flash_attention_program(device, q, cache, table, out, p0=p0, sq=sq, gate=gate, plan=plan)


def _registered_write(hkv: int, d: int, sq: int, p0: int, page_format: DataFormat) -> Program:
    device = build_device()
    page_tokens = 64
    pages = _ceil_div(p0 + sq, page_tokens) + 1
    cache = KVCache.create(device, pages, page_tokens, hkv, d, page_format)
    table = device.allocate(page_table_tensor_shape(pages), DataFormat.UInt32)
    rows = _ceil_div(p0 % TILE + sq, TILE) * TILE
    k = device.allocate((hkv, rows, d), DataFormat.Float16_b)
    v = device.allocate((hkv, rows, d), DataFormat.Float16_b)
    return kv_cache_write_program(device, cache, k, v, table, p0=p0)


@register("flash_attention/hq8_hkv2_d128_sq512_p0_1000_bf16")
def _fa_gqa_d128() -> Program:
    return _registered(8, 2, 128, 512, 1000, DataFormat.Float16_b)


@register("flash_attention/hq24_hkv4_d256_sq2048_bfp8_gated")
def _fa_qwen_d256() -> Program:
    return _registered(24, 4, 256, 2048, 0, DataFormat.Bfp8_b, gated=True)


@register("flash_attention/hq1_hkv1_d64_sq100_p0_64")
def _fa_small_d64() -> Program:
    return _registered(1, 1, 64, 100, 64, DataFormat.Float16_b)


@register("flash_attention/kv_cache_write_hkv4_d256_sq100_p0_1000_bfp8")
def _kv_write_bfp8() -> Program:
    return _registered_write(4, 256, 100, 1000, DataFormat.Bfp8_b)


@register("flash_attention/page_table_update_338_ids")
def _page_table_update_full() -> Program:
    """One full dispatch of a long prefix hit's page ids (32k tokens of 32-token pages: a 1024-entry table),
    starting inside the table's first tile row but crossing into later ones."""
    device = build_device()
    table = device.allocate(page_table_tensor_shape(1024), DataFormat.UInt32)
    return page_table_update_program(table, 20, list(range(3, 3 + PAGE_IDS_PER_DISPATCH)))


@register("flash_attention/page_table_update_chunk_4_ids")
def _page_table_update_chunk() -> Program:
    """A chunk's new pages at the defaults (256-token chunk, 64-token pages) of a 128-page request."""
    device = build_device()
    table = device.allocate(page_table_tensor_shape(128), DataFormat.UInt32)
    return page_table_update_program(table, 8, [40, 41, 97, 5])
