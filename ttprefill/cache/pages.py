"""The attention K/V page ids with reference counts: which pages are in use, not their memory.

A page holds `page_tokens` tokens of K/V; the engine's KV caches own the memory (KVCache on the device,
HostKVCache on the host), this allocator only says which ids are in use. Each holder of a page (the cached block that owns it, the reservation that
allocated it, every hit or reservation pinning its block) holds one reference; a page is free
exactly when its count is zero.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from .errors import PageError


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        if not isinstance(num_pages, int) or num_pages < 1:
            raise ValueError(f"PageAllocator needs at least one page, got num_pages={num_pages!r}")
        self.num_pages = num_pages
        self._refs = [0] * num_pages
        # Popped from the end: low ids are handed out first, which keeps test output readable.
        self._free = list(range(num_pages - 1, -1, -1))

    @property
    def num_free(self) -> int:
        return len(self._free)

    @property
    def num_used(self) -> int:
        return self.num_pages - len(self._free)

    def refcount(self, page: int) -> int:
        self._check_known(page)
        return self._refs[page]

    def allocate(self, count: int) -> list[int]:
        """Take `count` free pages, each with one reference."""
        if count < 0:
            raise ValueError(f"cannot allocate a negative number of pages ({count})")
        if count > len(self._free):
            raise PageError(
                f"pages exhausted: {count} pages requested, {len(self._free)} of "
                f"{self.num_pages} free; evict cached blocks first or give the cache more pages"
            )
        pages = [self._free.pop() for _ in range(count)]
        for page in pages:
            self._refs[page] = 1
        return pages

    def retain(self, pages: Iterable[int]) -> None:
        """Add one reference to each page; every page must already be in use."""
        pages = list(pages)
        for page in pages:
            self._check_known(page)
            if self._refs[page] == 0:
                raise PageError(f"cannot retain page {page}: it is free (not allocated)")
        for page in pages:
            self._refs[page] += 1

    def release(self, pages: Iterable[int]) -> list[int]:
        """Drop one reference per occurrence; returns the pages that became free.

        Checks the whole call before changing anything, so a double free leaves the allocator as it was.
        """
        wanted = Counter(pages)
        for page, times in wanted.items():
            self._check_known(page)
            if self._refs[page] < times:
                raise PageError(
                    f"double free of page {page}: {times} release(s) but only "
                    f"{self._refs[page]} reference(s) held"
                )
        freed = []
        for page, times in wanted.items():
            self._refs[page] -= times
            if self._refs[page] == 0:
                self._free.append(page)
                freed.append(page)
        return freed

    def check(self) -> None:
        """Raise PageError unless the free list is exactly the set of pages with no reference."""
        free = set(self._free)
        if len(free) != len(self._free):
            raise PageError("page allocator free list holds a page twice")
        for page, refs in enumerate(self._refs):
            if refs < 0:
                raise PageError(f"page {page} has a negative reference count ({refs})")
            if (refs == 0) != (page in free):
                state = "free list" if page in free else "no free-list entry"
                raise PageError(f"page {page} has {refs} reference(s) but {state}")

    def _check_known(self, page: int) -> None:
        if not isinstance(page, int) or not 0 <= page < self.num_pages:
            raise PageError(f"unknown page id {page!r}: the allocator has pages 0..{self.num_pages - 1}")
