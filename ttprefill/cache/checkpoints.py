"""GDN state checkpoints: where to place them, and the two tiers that hold them.

A checkpoint is the recurrent and conv state of every GDN layer after some block-aligned prompt
position. Its payload is opaque here (the engine decides: a dict of arrays, device tensors, ...);
the cache only knows its size and tier. Moving a payload between the device and host tiers goes
through two callables the cache's owner may pass (spill_fn, restore_fn); the defaults pass the
payload through unchanged. The engine keeps every payload as host arrays and passes none, so for it
a tier is the budget a checkpoint counts against.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from .errors import CacheInvariantError

DEVICE = "device"
HOST = "host"
TIERS = (DEVICE, HOST)

MoveFn = Callable[[Any], Any]


def _same_payload(payload: Any) -> Any:
    return payload


@dataclass(frozen=True)
class CheckpointPolicy:
    """Where a prompt's GDN checkpoints go: every `every_blocks` blocks, and at its last block end.

    The end-of-prompt checkpoint serves multi-turn chat (the next turn extends this prompt); the
    periodic ones serve prompts that share a long prefix and then diverge. One checkpoint of a
    27B-shaped model weighs as much as ~2,350 tokens of attention K/V (GDN.md), so the interval
    trades memory for recompute after a divergence (at most every_blocks blocks are redone); None
    places checkpoints at prompt ends only. Subclass and override `positions` to try other placements.
    """

    every_blocks: int | None
    at_prompt_end: bool = True

    def __post_init__(self) -> None:
        if self.every_blocks is not None and (
            not isinstance(self.every_blocks, int) or self.every_blocks < 1
        ):
            raise ValueError(
                f"every_blocks must be a positive block count or None, got {self.every_blocks!r}"
            )

    def positions(self, num_tokens: int, start: int, block_tokens: int) -> list[int]:
        """Sorted block-aligned positions p, start < p <= num_tokens, to checkpoint at."""
        last_boundary = num_tokens // block_tokens * block_tokens
        wanted: list[int] = []
        if self.every_blocks is not None:
            step = self.every_blocks * block_tokens
            first = (start // step + 1) * step
            wanted.extend(range(first, last_boundary + 1, step))
        if self.at_prompt_end and last_boundary > start and last_boundary not in wanted:
            wanted.append(last_boundary)
        return wanted


@dataclass(eq=False)
class Checkpoint:
    """The GDN state after the block `key` (which ends at `position`)."""

    key: bytes
    position: int
    payload: Any
    nbytes: int
    tier: str
    pins: int = 0  # live hits/reservations that will read this payload: never moved while > 0


class CheckpointStore:
    """Checkpoints by block key, with per-tier byte totals and least-recently-used order."""

    def __init__(self, spill_fn: MoveFn | None = None, restore_fn: MoveFn | None = None) -> None:
        self._spill_fn = spill_fn or _same_payload
        self._restore_fn = restore_fn or _same_payload
        self._by_key: dict[bytes, Checkpoint] = {}
        # Oldest first; touching an entry moves it to the end.
        self._lru: dict[str, OrderedDict[bytes, None]] = {tier: OrderedDict() for tier in TIERS}
        self.bytes: dict[str, int] = {tier: 0 for tier in TIERS}

    def __contains__(self, key: bytes) -> bool:
        return key in self._by_key

    def __len__(self) -> int:
        return len(self._by_key)

    def get(self, key: bytes) -> Checkpoint | None:
        return self._by_key.get(key)

    def count(self, tier: str) -> int:
        return len(self._lru[tier])

    def add(self, key: bytes, position: int, payload: Any, nbytes: int, tier: str) -> Checkpoint:
        if key in self._by_key:
            raise ValueError("a checkpoint for this block is already stored")
        checkpoint = Checkpoint(key, position, payload, nbytes, tier)
        self._by_key[key] = checkpoint
        self._lru[tier][key] = None
        self.bytes[tier] += nbytes
        return checkpoint

    def touch(self, key: bytes) -> None:
        self._lru[self._by_key[key].tier].move_to_end(key)

    def drop(self, key: bytes) -> Checkpoint:
        checkpoint = self._by_key.pop(key)
        if checkpoint.pins:
            self._by_key[key] = checkpoint
            raise ValueError("cannot drop a pinned checkpoint")
        del self._lru[checkpoint.tier][key]
        self.bytes[checkpoint.tier] -= checkpoint.nbytes
        return checkpoint

    def move(self, key: bytes, tier: str) -> Checkpoint:
        """Spill (to host) or restore (to device) through the engine's copy function."""
        checkpoint = self._by_key[key]
        if checkpoint.tier == tier:
            raise ValueError(f"checkpoint already on the {tier} tier")
        if checkpoint.pins and tier == HOST:
            raise ValueError("cannot spill a pinned checkpoint: a request is about to read it")
        move_fn = self._spill_fn if tier == HOST else self._restore_fn
        payload = move_fn(checkpoint.payload)  # may raise: nothing has changed yet
        del self._lru[checkpoint.tier][key]
        self.bytes[checkpoint.tier] -= checkpoint.nbytes
        checkpoint.payload = payload
        checkpoint.tier = tier
        self._lru[tier][key] = None
        self.bytes[tier] += checkpoint.nbytes
        return checkpoint

    def to_host_payload(self, payload: Any) -> Any:
        """Copy a payload the engine handed over for the device into host form."""
        return self._spill_fn(payload)

    def unpinned(self, tier: str) -> Iterator[Checkpoint]:
        """Unpinned checkpoints of a tier, least recently used first."""
        for key in list(self._lru[tier]):
            checkpoint = self._by_key[key]
            if checkpoint.pins == 0:
                yield checkpoint

    def all(self) -> Iterator[Checkpoint]:
        return iter(list(self._by_key.values()))

    def check(self) -> None:
        for tier in TIERS:
            keys = self._lru[tier]
            total = 0
            for key in keys:
                checkpoint = self._by_key.get(key)
                if checkpoint is None or checkpoint.tier != tier:
                    raise CacheInvariantError(f"{tier} LRU lists a checkpoint not on that tier")
                total += checkpoint.nbytes
            if total != self.bytes[tier]:
                raise CacheInvariantError(
                    f"{tier} checkpoint bytes recorded as {self.bytes[tier]}, "
                    f"entries sum to {total}"
                )
        if sum(len(keys) for keys in self._lru.values()) != len(self._by_key):
            raise CacheInvariantError("a checkpoint is missing from its tier's LRU order")
