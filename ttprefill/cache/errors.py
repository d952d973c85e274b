"""Errors raised by the prefix cache."""

from __future__ import annotations


class CacheFullError(RuntimeError):
    """Not enough device room for a request, even after evicting everything unpinned.

    `permanent` is True when the request could never fit (more than the whole pool or budget),
    False when live requests pin the room it needs and it may fit once they finish.
    """

    def __init__(self, message: str, *, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


class PageError(RuntimeError):
    """Misuse of the page allocator: freeing a free page, an unknown page id, or running out."""


class CacheInvariantError(AssertionError):
    """The cache's bookkeeping is inconsistent (a bug in the cache or its caller)."""
