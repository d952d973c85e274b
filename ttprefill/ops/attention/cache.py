"""The paged K/V cache in device DRAM and the page table the kernels read."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ttprefill.device.program import DataFormat
from ttprefill.device.tensor import DeviceTensor

from .shapes import (
    PAGE_FORMATS,
    SUPPORTED_HEAD_DIMS,
    TILE,
    CacheCapacityError,
    HeadDimError,
    PageTableError,
    ShapeError,
)


@dataclass
class KVCache:
    """The paged K/V pool in device DRAM: K and V pools [num_pages, kv_heads, page_tokens, head_dim]."""

    device: object
    k_pool: DeviceTensor
    v_pool: DeviceTensor
    page_tokens: int
    kv_heads: int
    head_dim: int
    data_format: DataFormat

    @classmethod
    def create(cls, device, num_pages: int, page_tokens: int, kv_heads: int, head_dim: int,
               data_format: DataFormat = DataFormat.Float16_b) -> "KVCache":
        """Allocates both pools; on a device that holds data they start zeroed (finite padding)."""
        if num_pages < 1:
            raise CacheCapacityError(f"a K/V cache needs at least one page, got num_pages={num_pages}")
        if page_tokens < TILE or page_tokens % TILE:
            raise ShapeError(f"page_tokens={page_tokens}: a page must hold a whole number of 32-token tiles "
                             "(use 32, 64, 128, ...)")
        if head_dim not in SUPPORTED_HEAD_DIMS:
            raise HeadDimError(f"head_dim={head_dim} is not supported; use one of {SUPPORTED_HEAD_DIMS}")
        data_format = DataFormat(data_format)
        if data_format not in PAGE_FORMATS:
            raise ShapeError(f"cache pages in {data_format.name} are not supported; use Float16_b or Bfp8_b")
        shape = (num_pages, kv_heads, page_tokens, head_dim)
        k_pool = device.allocate(shape, data_format)
        v_pool = device.allocate(shape, data_format)
        if device.capabilities.holds_data:
            zeros = np.zeros(shape, np.float32)
            device.write(k_pool, zeros)
            device.write(v_pool, zeros)
        return cls(device, k_pool, v_pool, page_tokens, kv_heads, head_dim, data_format)

    @property
    def num_pages(self) -> int:
        return self.k_pool.shape[0]

    @property
    def capacity_tokens(self) -> int:
        return self.num_pages * self.page_tokens

    @property
    def page_tiles(self) -> int:
        return self.page_tokens // TILE

    def read(self, page_table, tokens: int) -> tuple[np.ndarray, np.ndarray]:
        """K and V of logical tokens [0, tokens) as [tokens, kv_heads, head_dim] (for tests and debugging)."""
        check_page_table(self, page_table, tokens)
        k_pages, v_pages = self.device.download(self.k_pool), self.device.download(self.v_pool)
        blocks = -(-tokens // self.page_tokens)
        pages = list(page_table)[:blocks]
        k = np.concatenate([k_pages[p] for p in pages], axis=1)[:, :tokens]  # [Hkv, tokens, D]
        v = np.concatenate([v_pages[p] for p in pages], axis=1)[:, :tokens]
        return k.transpose(1, 0, 2), v.transpose(1, 0, 2)

    def free(self) -> None:
        self.device.free(self.k_pool)
        self.device.free(self.v_pool)


def check_page_table(cache: KVCache, page_table, tokens: int) -> list[int]:
    """The pages holding logical tokens [0, tokens), validated against the cache."""
    if tokens > cache.capacity_tokens:
        raise CacheCapacityError(
            f"{tokens} tokens do not fit the K/V cache: {cache.num_pages} pages x {cache.page_tokens} tokens = "
            f"{cache.capacity_tokens}; create the cache with more pages or prefill a shorter context")
    table = [int(p) for p in page_table]
    blocks = -(-tokens // cache.page_tokens)
    if len(table) < blocks:
        raise PageTableError(
            f"page table has {len(table)} entries but {tokens} tokens need {blocks} pages of {cache.page_tokens} "
            "tokens; allocate pages for every block up to the end of this chunk")
    used = table[:blocks]
    bad = [p for p in used if not 0 <= p < cache.num_pages]
    if bad:
        raise PageTableError(f"page table names page {bad[0]} outside the pool of {cache.num_pages} pages "
                             f"(valid ids 0..{cache.num_pages - 1})")
    if len(set(used)) != len(used):
        dup = next(p for p in used if used.count(p) > 1)
        raise PageTableError(f"page table names page {dup} for two blocks; every block needs its own page")
    return used


def page_table_tensor_shape(entries: int) -> tuple[int, int]:
    return (max(1, -(-entries // TILE)), TILE)


def upload_page_table(device, page_table) -> DeviceTensor:
    """The table as the UInt32 [rows, 32] tensor the kernels read (entry i at row i // 32, column i % 32)."""
    table = np.asarray([int(p) for p in page_table], dtype=np.int64)
    rows, cols = page_table_tensor_shape(len(table))
    padded = np.zeros(rows * cols, dtype=np.uint32)
    padded[: len(table)] = table
    return device.upload(padded.reshape(rows, cols), DataFormat.UInt32)
