"""Prefix cache: chain-hashed token blocks, attention K/V pages and GDN state checkpoints.

Entry point: PrefixCache (see prefix_cache.py for the request protocol and the memory policy).
"""

from .blocks import CachedBlock, block_hash, chain_keys
from .checkpoints import DEVICE, HOST, Checkpoint, CheckpointPolicy, CheckpointStore
from .errors import CacheFullError, CacheInvariantError, PageError
from .pages import PageAllocator
from .prefix_cache import CacheStats, Hit, PinSet, PrefixCache, Reservation

__all__ = [
    "DEVICE",
    "HOST",
    "CacheFullError",
    "CacheInvariantError",
    "CacheStats",
    "CachedBlock",
    "Checkpoint",
    "CheckpointPolicy",
    "CheckpointStore",
    "Hit",
    "PageError",
    "PageAllocator",
    "PinSet",
    "PrefixCache",
    "Reservation",
    "block_hash",
    "chain_keys",
]
