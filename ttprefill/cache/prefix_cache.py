"""The prefix cache: published token blocks with their attention pages and GDN checkpoints.

How the chunk scheduler (ttprefill.scheduler) uses it, per request:

    keys = cache.chain_keys(tokens)       # once, at submission
    res = cache.admit(request_id, tokens, keys)  # lookup() + begin(): the longest cached prefix that
                                          # ends on a GDN checkpoint, pages for the rest of the prompt
    ... for each computed chunk ending at `end`:
        cache.commit_blocks(res, end)     # publish the full blocks computed so far
        cache.store_checkpoint(res, end, payload, nbytes)   # at res.checkpoint_positions
    cache.finish(res)                     # or cache.abort(res) on failure

lookup() and begin() can also be called apart: a hit that is not passed to begin() must be given
back with cache.release(hit); begin() releases it itself when it fails. The hit's checkpoint payload
and the payloads handed to store_checkpoint() are kept by reference: the engine copies state out of
them, never mutates them. Once it has copied the hit's state, release_initial_state(res) lets it be
spilled again.

Attention K/V of a prefix is reusable at any block boundary, but GDN state only where a
checkpoint was stored (GDN.md), so a hit is cut back to the last checkpoint on its chain.

Memory. Device bytes are the pages in use (bytes_per_page each) plus device-tier checkpoints;
host bytes are host-tier checkpoints. When the device needs room, unpinned checkpoints spill to
the host first (least recently used first; the host drops its own least recently used to make
room), and only then are unpinned blocks evicted (least recently used leaf first, with their
pages and checkpoint). A hit on a spilled checkpoint restores it to the device.

Pins. A hit pins its blocks (and their pages) and its checkpoint; begin() hands those pins to
the reservation, which also pins every block it publishes. Nothing pinned is evicted or spilled.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from loguru import logger

from . import blocks
from .blocks import CachedBlock, block_tokens_at
from .checkpoints import DEVICE, HOST, CheckpointPolicy, CheckpointStore, MoveFn
from .errors import CacheFullError, CacheInvariantError
from .invariants import check_cache
from .pages import PageAllocator


@dataclass(eq=False)
class PinSet:
    """What one live hit or reservation holds: block keys (their pages too) and a checkpoint."""

    blocks: list[bytes] = field(default_factory=list)
    checkpoint: bytes | None = None


@dataclass(eq=False)
class Hit:
    """Result of lookup(): the reusable prefix of a prompt.

    num_tokens: prefix length served (a multiple of block_tokens; 0 on a miss).
    page_ids: attention pages of that prefix, in order (num_tokens / page_tokens of them).
    checkpoint: GDN state payload at num_tokens, on the device tier; None on a miss (start from
        zero state).
    matched_tokens: longest cached chain of full blocks (>= num_tokens); the blocks past
        num_tokens had no checkpoint so they are recomputed.
    handle: the pins this hit holds until begin() takes them over or release() drops them.
    """

    num_tokens: int
    page_ids: list[int]
    checkpoint: Any
    matched_tokens: int
    handle: PinSet
    hit_id: int = 0
    live: bool = True


@dataclass(eq=False)
class Reservation:
    """A request being prefilled: its page table and what it has published so far."""

    request_id: str
    tokens: tuple[int, ...]
    hit_tokens: int
    hit_pages: list[int]
    new_pages: list[int]
    # Where the request stores GDN checkpoints, sorted, in (hit_tokens, len(tokens)]: the policy's positions
    # plus any added with add_checkpoint_position(). The one list the chunk plan follows.
    checkpoint_positions: list[int]
    initial_state: Any  # GDN checkpoint payload at hit_tokens (None: zero state)
    chain: list[bytes]  # keys of this prompt's blocks 0..len(chain)-1, all cached and pinned
    owned_pages: set[int]  # allocated here and not (yet) handed to a published block
    pins: PinSet
    committed_tokens: int
    publishing: bool = True  # False once a hash collision stopped publication of later blocks
    block_keys: list[bytes] | None = None  # chain keys of the prompt's full blocks, when the caller had them
    live: bool = True

    @property
    def num_tokens(self) -> int:
        return len(self.tokens)

    @property
    def page_table(self) -> list[int]:
        """Attention pages of the whole prompt, in token order (hit pages, then new pages)."""
        return self.hit_pages + self.new_pages


@dataclass
class CacheStats:
    lookups: int = 0
    hits: int = 0
    misses: int = 0
    lookup_tokens: int = 0  # prompt tokens seen by lookup()
    hit_tokens: int = 0  # of which served from the cache
    dropped_hits: int = 0  # hits given up in begin() so that a request fitting the cache is not refused
    collisions: int = 0
    evicted_blocks: int = 0
    dropped_checkpoints: int = 0  # removed from the host tier (or never stored) for lack of room
    spills: int = 0
    restores: int = 0
    aborts: int = 0
    # Filled in by PrefixCache.stats() from live state.
    device_bytes: int = 0
    host_bytes: int = 0
    pages_used: int = 0
    blocks: int = 0
    device_checkpoints: int = 0
    host_checkpoints: int = 0


def _as_tokens(tokens: Sequence[int]) -> tuple[int, ...]:
    if len(tokens) == 0:
        raise ValueError("empty prompt: a request needs at least one token")
    try:
        return tuple(map(int, tokens))
    except (TypeError, ValueError) as error:
        raise ValueError(f"prompt tokens must be integers: {error}") from None


class PrefixCache:
    def __init__(
        self,
        *,
        num_pages: int,
        bytes_per_page: int,
        model_key: str,
        block_tokens: int,
        page_tokens: int,
        device_budget: int | None = None,
        host_budget: int = 0,
        checkpoint_every_blocks: int | None,
        spill_fn: MoveFn | None = None,
        restore_fn: MoveFn | None = None,
    ) -> None:
        """A cache of `num_pages` attention pages of `page_tokens` tokens (`bytes_per_page` each).

        device_budget: bytes of pages in use plus device checkpoints (default: all num_pages pages).
        host_budget: bytes of spilled checkpoints (0: no host tier, spilling drops).
        checkpoint_every_blocks: GDN checkpoint placement (CheckpointPolicy); the engine's default is
            EngineOptions'. Assign `policy` to place them otherwise.
        spill_fn/restore_fn copy a checkpoint payload device->host / host->device.
        """
        for name, value in (
            ("block_tokens", block_tokens),
            ("page_tokens", page_tokens),
            ("num_pages", num_pages),
            ("bytes_per_page", bytes_per_page),
        ):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if block_tokens % page_tokens:
            raise ValueError(
                f"block_tokens ({block_tokens}) must be a multiple of page_tokens ({page_tokens}) "
                "so that every block owns whole pages"
            )
        if device_budget is None:
            device_budget = num_pages * bytes_per_page
        pages_per_block = block_tokens // page_tokens
        one_block_bytes = pages_per_block * bytes_per_page
        if device_budget < one_block_bytes or num_pages < pages_per_block:
            raise ValueError(
                f"cache too small: one block of {block_tokens} tokens needs {pages_per_block} "
                f"pages ({one_block_bytes} bytes) but the cache has {num_pages} pages and the "
                f"device budget is {device_budget} bytes; raise num_pages/device_budget"
            )
        if host_budget < 0:
            raise ValueError(f"host_budget must be >= 0 bytes, got {host_budget}")
        if not isinstance(model_key, str) or not model_key:
            raise ValueError(
                "model_key must be a non-empty string naming the model and its weights"
            )

        self.block_tokens = block_tokens
        self.page_tokens = page_tokens
        self.pages_per_block = pages_per_block
        self.bytes_per_page = bytes_per_page
        self.device_budget = device_budget
        self.host_budget = host_budget
        self.model_key = model_key
        self.policy = CheckpointPolicy(every_blocks=checkpoint_every_blocks)

        self.allocator = PageAllocator(num_pages)
        self.checkpoints = CheckpointStore(spill_fn, restore_fn)
        # Block table in least-recently-used order (oldest first).
        self._blocks: dict[bytes, CachedBlock] = {}
        self._live_hits: dict[int, Hit] = {}
        self._reservations: dict[str, Reservation] = {}
        self._hit_ids = itertools.count(1)
        self._stats = CacheStats()

    # ------------------------------------------------------------------ queries

    @property
    def device_bytes(self) -> int:
        return self.allocator.num_used * self.bytes_per_page + self.checkpoints.bytes[DEVICE]

    @property
    def host_bytes(self) -> int:
        return self.checkpoints.bytes[HOST]

    @property
    def num_blocks(self) -> int:
        return len(self._blocks)

    def block(self, key: bytes) -> CachedBlock | None:
        return self._blocks.get(key)

    def reservation(self, request_id: str) -> Reservation | None:
        return self._reservations.get(request_id)

    def stats(self) -> CacheStats:
        return replace(
            self._stats,
            device_bytes=self.device_bytes,
            host_bytes=self.host_bytes,
            pages_used=self.allocator.num_used,
            blocks=len(self._blocks),
            device_checkpoints=self.checkpoints.count(DEVICE),
            host_checkpoints=self.checkpoints.count(HOST),
        )

    def checkpoint_positions(self, num_tokens: int, hit_tokens: int) -> list[int]:
        return self.policy.positions(num_tokens, hit_tokens, self.block_tokens)

    def chain_keys(self, tokens: Sequence[int]) -> list[bytes]:
        """Keys of the prompt's full blocks under this cache's model key (pass them to admit())."""
        return blocks.chain_keys(_as_tokens(tokens), self.block_tokens, self.model_key)

    def admit(self, request_id: str, tokens: Sequence[int], keys: Sequence[bytes] | None = None) -> Reservation:
        """lookup() then begin(): the reservation of a request, served from the longest usable prefix.

        keys: the prompt's chain_keys(), if the caller has them, so the prompt is hashed once.
        Raises CacheFullError as begin() does, holding nothing.
        """
        hit = self.lookup(tokens, keys)
        return self.begin(request_id, tokens, hit, keys)

    # ------------------------------------------------------------------ lookup

    def lookup(self, tokens: Sequence[int], keys: Sequence[bytes] | None = None) -> Hit:
        """Longest cached prefix of `tokens` ending on a GDN checkpoint, pinned for the caller.

        At least one token is always left to compute (the engine needs the last token's logits),
        so a prompt that is cached whole is served up to its last block boundary before the end.
        """
        tokens = _as_tokens(tokens)
        matched = self._match_chain(tokens, keys)
        for depth in range(len(matched), 0, -1):
            checkpoint = self.checkpoints.get(matched[depth - 1].key)
            if checkpoint is None:
                continue
            handle = PinSet([block.key for block in matched[:depth]], checkpoint.key)
            self._pin(handle)
            try:
                restored = checkpoint.tier == DEVICE or self._restore(checkpoint)
            except BaseException:
                self._unpin(handle)  # the engine's restore_fn failed: leave no pins behind
                raise
            if not restored:
                self._unpin(handle)
                continue
            self._touch_chain(matched[:depth])
            self.checkpoints.touch(checkpoint.key)
            num_tokens = depth * self.block_tokens
            self._count_lookup(tokens)
            self._stats.hits += 1
            self._stats.hit_tokens += num_tokens
            return self._new_hit(
                num_tokens,
                [page for block in matched[:depth] for page in block.pages],
                checkpoint.payload,
                len(matched) * self.block_tokens,
                handle,
            )
        self._count_lookup(tokens)
        self._stats.misses += 1
        return self._new_hit(0, [], None, len(matched) * self.block_tokens, PinSet())

    def _count_lookup(self, tokens: tuple[int, ...]) -> None:
        # Counted when a lookup answers (hit or miss), so lookups == hits + misses even when a
        # checkpoint restore raised out of one.
        self._stats.lookups += 1
        self._stats.lookup_tokens += len(tokens)

    def release(self, hit: Hit) -> None:
        """Drop a hit that will not be passed to begin()."""
        self._take_hit(hit)
        self._unpin(hit.handle)

    def _block_key(self, parent: bytes | None, tokens: tuple[int, ...], index: int, keys) -> bytes:
        if keys is not None and index < len(keys):
            return keys[index]
        return blocks.block_hash(parent, block_tokens_at(tokens, index, self.block_tokens), self.model_key)

    def _match_chain(self, tokens: tuple[int, ...], keys: Sequence[bytes] | None = None) -> list[CachedBlock]:
        matched: list[CachedBlock] = []
        parent: bytes | None = None
        for index in range((len(tokens) - 1) // self.block_tokens):
            block_tokens = block_tokens_at(tokens, index, self.block_tokens)
            key = self._block_key(parent, tokens, index, keys)
            block = self._blocks.get(key)
            if block is None:
                break
            # The guard against hash collisions: the cached block must hold these very tokens at
            # this very place in the chain, or it is someone else's prefix.
            if block.tokens != block_tokens or block.parent != parent or block.index != index:
                self._stats.collisions += 1
                logger.warning(
                    "prefix cache: block key collision at block {} (different tokens under the "
                    "same key); treating it as a miss",
                    index,
                )
                break
            matched.append(block)
            parent = key
        return matched

    def _new_hit(self, num_tokens, page_ids, payload, matched_tokens, handle) -> Hit:
        hit = Hit(num_tokens, page_ids, payload, matched_tokens, handle, next(self._hit_ids))
        self._live_hits[hit.hit_id] = hit
        return hit

    def _take_hit(self, hit: Hit) -> None:
        if not isinstance(hit, Hit) or self._live_hits.get(hit.hit_id) is not hit:
            raise ValueError(
                "this hit is not live in this cache: it was already released or passed to "
                "begin(), or came from another cache; call lookup() again"
            )
        del self._live_hits[hit.hit_id]
        hit.live = False

    # ------------------------------------------------------------------ requests

    def begin(self, request_id: str, tokens: Sequence[int], hit: Hit,
              keys: Sequence[bytes] | None = None) -> Reservation:
        """Reserve pages for the uncached part of the prompt; takes over the hit's pins.

        Raises CacheFullError if the pages cannot be found even after evicting everything
        unpinned. On any error the hit is released too and the cache is as before the call.
        """
        try:
            tokens = _as_tokens(tokens)
            if request_id in self._reservations:
                raise ValueError(f"request {request_id!r} already has a live reservation")
            if not isinstance(hit, Hit) or self._live_hits.get(hit.hit_id) is not hit:
                raise ValueError(
                    "begin() needs a live hit from this cache's lookup() (this one was already "
                    "used or released)"
                )
            self._check_hit_matches(hit, tokens)
            new_page_count = -(-(len(tokens) - hit.num_tokens) // self.page_tokens)
            if not self._make_device_room(new_page_count, 0) and hit.num_tokens:
                # The hit's own pins can be what keeps the rest from fitting (its blocks and checkpoint
                # cannot be evicted while it holds them). Computing the whole prompt may fit where
                # reusing the prefix does not: serve no cached tokens rather than refuse.
                logger.debug("prefix cache: request {!r} does not fit beside its {}-token hit; dropping the hit",
                             request_id, hit.num_tokens)
                self.release(hit)
                self._stats.hits -= 1  # counted as the miss it has become
                self._stats.misses += 1
                self._stats.hit_tokens -= hit.num_tokens
                self._stats.dropped_hits += 1
                hit = self._new_hit(0, [], None, hit.matched_tokens, PinSet())
                new_page_count = -(-len(tokens) // self.page_tokens)
            self._make_room_or_raise(request_id, len(tokens) - hit.num_tokens, new_page_count)
            new_pages = self.allocator.allocate(new_page_count)
        except BaseException:
            if isinstance(hit, Hit) and self._live_hits.get(hit.hit_id) is hit:
                self.release(hit)
            raise
        self._take_hit(hit)
        reservation = Reservation(
            request_id=request_id,
            tokens=tokens,
            hit_tokens=hit.num_tokens,
            hit_pages=list(hit.page_ids),
            new_pages=new_pages,
            checkpoint_positions=self.checkpoint_positions(len(tokens), hit.num_tokens),
            initial_state=hit.checkpoint,
            chain=list(hit.handle.blocks),
            owned_pages=set(new_pages),
            pins=hit.handle,
            committed_tokens=hit.num_tokens,
            block_keys=None if keys is None else list(keys),
        )
        self._reservations[request_id] = reservation
        return reservation

    def _check_hit_matches(self, hit: Hit, tokens: tuple[int, ...]) -> None:
        if hit.num_tokens >= len(tokens):
            raise ValueError(
                f"hit of {hit.num_tokens} tokens leaves nothing to compute in a "
                f"{len(tokens)}-token prompt; use lookup() on this prompt"
            )
        for index, key in enumerate(hit.handle.blocks):
            if self._blocks[key].tokens != block_tokens_at(tokens, index, self.block_tokens):
                raise ValueError(
                    f"the hit was looked up for another prompt (block {index} differs); "
                    "call lookup() with this request's tokens"
                )

    def commit_blocks(self, reservation: Reservation, upto_tokens: int) -> None:
        """Publish the full blocks of the prompt's first `upto_tokens` tokens (K/V written)."""
        self._check_live(reservation)
        if not 0 <= upto_tokens <= reservation.num_tokens:
            raise ValueError(
                f"commit_blocks upto_tokens={upto_tokens} outside the prompt "
                f"(0..{reservation.num_tokens})"
            )
        reservation.committed_tokens = max(reservation.committed_tokens, upto_tokens)
        target = upto_tokens // self.block_tokens
        while reservation.publishing and len(reservation.chain) < target:
            self._publish_next_block(reservation)

    def _publish_next_block(self, reservation: Reservation) -> None:
        index = len(reservation.chain)
        parent = reservation.chain[-1] if index else None
        block_tokens = block_tokens_at(reservation.tokens, index, self.block_tokens)
        key = self._block_key(parent, reservation.tokens, index, reservation.block_keys)
        existing = self._blocks.get(key)
        if existing is not None:
            same_place = existing.parent == parent and existing.index == index
            if existing.tokens != block_tokens or not same_place:
                self._stats.collisions += 1
                reservation.publishing = False
                logger.warning(
                    "prefix cache: request {} block {} collides with a cached block; its later "
                    "blocks stay private to the request",
                    reservation.request_id,
                    index,
                )
                return
            # Another request published the same block first (it was past this request's hit, so
            # it had no checkpoint at lookup time). Keep our own pages for our attention; pin the
            # cached one so the chain under our later blocks stays cached.
            self._pin_block(existing)
            reservation.pins.blocks.append(key)
            self._touch_chain([existing])
        else:
            first = index * self.pages_per_block
            pages = tuple(reservation.page_table[first : first + self.pages_per_block])
            block = CachedBlock(key, parent, index, block_tokens, pages)
            # The reservation's page references become the block's: no count changes.
            reservation.owned_pages.difference_update(pages)
            self._blocks[key] = block
            if parent is not None:
                self._blocks[parent].children += 1
            self._pin_block(block)
            reservation.pins.blocks.append(key)
        reservation.chain.append(key)

    def add_checkpoint_position(self, reservation: Reservation, position: int) -> None:
        """Have the request store a checkpoint at `position` too (e.g. where another prompt diverges)."""
        self._check_live(reservation)
        if position % self.block_tokens or not reservation.hit_tokens < position <= reservation.num_tokens:
            raise ValueError(
                f"checkpoint position {position} must be a multiple of block_tokens ({self.block_tokens}) "
                f"in ({reservation.hit_tokens}, {reservation.num_tokens}] for request {reservation.request_id!r}"
            )
        if position not in reservation.checkpoint_positions:
            bisect.insort(reservation.checkpoint_positions, position)

    def store_checkpoint(
        self, reservation: Reservation, position: int, payload: Any, nbytes: int
    ) -> str | None:
        """Keep the GDN state at a committed block boundary; returns the tier it went to.

        Returns None when it was not stored: a checkpoint is already there, or there is no room
        on either tier, or the block was not published (hash collision). A checkpoint is an
        optimisation, so lack of room is not an error.
        """
        self._check_live(reservation)
        if not isinstance(nbytes, int) or nbytes < 0:
            raise ValueError(f"checkpoint nbytes must be a non-negative integer, got {nbytes!r}")
        if position <= 0 or position % self.block_tokens:
            raise ValueError(
                f"checkpoint position {position} is not a positive multiple of block_tokens "
                f"({self.block_tokens}); only block boundaries can be checkpointed"
            )
        if position > reservation.committed_tokens:
            raise ValueError(
                f"checkpoint at {position} but only {reservation.committed_tokens} tokens are "
                "committed; call commit_blocks() first"
            )
        index = position // self.block_tokens - 1
        if index >= len(reservation.chain):
            return None  # publication stopped at a collision; nothing to attach it to
        key = reservation.chain[index]
        if key in self.checkpoints:
            self.checkpoints.touch(key)
            return None
        if self._make_device_room(0, nbytes):
            self.checkpoints.add(key, position, payload, nbytes, DEVICE)
            return DEVICE
        if self._host_can_fit(nbytes):
            host_payload = self.checkpoints.to_host_payload(payload)
            self._make_host_room(nbytes)
            self.checkpoints.add(key, position, host_payload, nbytes, HOST)
            self._stats.spills += 1
            return HOST
        self._stats.dropped_checkpoints += 1
        logger.debug("prefix cache: no room for a {}-byte checkpoint; not stored", nbytes)
        return None

    def release_initial_state(self, reservation: Reservation) -> None:
        """The engine has copied the hit's checkpoint into its own state: it may be spilled now."""
        self._check_live(reservation)
        if reservation.pins.checkpoint is not None:
            self.checkpoints.get(reservation.pins.checkpoint).pins -= 1
            reservation.pins.checkpoint = None

    def finish(self, reservation: Reservation) -> None:
        """The request is done: unpin everything and free pages no published block took."""
        self._close(reservation)

    def abort(self, reservation: Reservation) -> None:
        """The request failed: free its unpublished pages and unpin.

        Blocks committed before the failure stay cached: each was complete when committed.
        Nothing partial is ever visible, since a block is published only whole.
        """
        self._stats.aborts += 1
        logger.info("prefix cache: request {} aborted", reservation.request_id)
        self._close(reservation)

    def _close(self, reservation: Reservation) -> None:
        self._check_live(reservation)
        self._unpin(reservation.pins)
        self.allocator.release(reservation.owned_pages)
        reservation.owned_pages = set()
        reservation.live = False
        del self._reservations[reservation.request_id]

    def _check_live(self, reservation: Reservation) -> None:
        if self._reservations.get(reservation.request_id) is not reservation:
            raise ValueError(
                f"reservation for request {reservation.request_id!r} is not live in this cache "
                "(already finished or aborted)"
            )

    # ------------------------------------------------------------------ pins and LRU

    def _pin_block(self, block: CachedBlock) -> None:
        block.pins += 1
        self.allocator.retain(block.pages)

    def _pin(self, pins: PinSet) -> None:
        for key in pins.blocks:
            self._pin_block(self._blocks[key])
        if pins.checkpoint is not None:
            self.checkpoints.get(pins.checkpoint).pins += 1

    def _unpin(self, pins: PinSet) -> None:
        for key in pins.blocks:
            block = self._blocks[key]
            block.pins -= 1
            self.allocator.release(block.pages)
        if pins.checkpoint is not None:
            self.checkpoints.get(pins.checkpoint).pins -= 1
        pins.blocks = []
        pins.checkpoint = None

    def _touch_chain(self, chain: Sequence[CachedBlock]) -> None:
        # Leaf first, root last: a prefix is always at least as recent as its extensions, so the
        # oldest entries are leaves and eviction rarely has to skip over parents.
        for block in reversed(chain):
            self._blocks[block.key] = self._blocks.pop(block.key)

    # ------------------------------------------------------------------ eviction and spilling

    def evict_lru(self, count: int = 1) -> int:
        """Evict up to `count` unpinned leaf blocks, oldest first; returns how many went."""
        evicted = 0
        while evicted < count and self._evict_one_block():
            evicted += 1
        return evicted

    def spill_lru(self, count: int = 1) -> int:
        """Move up to `count` unpinned device checkpoints to the host; returns how many moved."""
        moved = 0
        while moved < count and self._spill_one():
            moved += 1
        return moved

    def _evict_one_block(self) -> bool:
        for block in self._blocks.values():
            if block.pins == 0 and block.children == 0:
                self._evict_block(block)
                return True
        return False

    def _evict_block(self, block: CachedBlock) -> None:
        if block.key in self.checkpoints:
            self.checkpoints.drop(block.key)
        del self._blocks[block.key]
        if block.parent is not None:
            self._blocks[block.parent].children -= 1
        self.allocator.release(block.pages)
        self._stats.evicted_blocks += 1

    def _spill_one(self) -> bool:
        """Spill the least recently used unpinned device checkpoint (or drop it: no host room)."""
        for checkpoint in self.checkpoints.unpinned(DEVICE):
            if self._host_can_fit(checkpoint.nbytes):
                self._make_host_room(checkpoint.nbytes)
                self.checkpoints.move(checkpoint.key, HOST)
                self._stats.spills += 1
            else:
                self.checkpoints.drop(checkpoint.key)
                self._stats.dropped_checkpoints += 1
            return True
        return False

    def _host_can_fit(self, nbytes: int) -> bool:
        # Host checkpoints are pinned only while lookup() restores one; those cannot be dropped.
        pinned = self.host_bytes - sum(c.nbytes for c in self.checkpoints.unpinned(HOST))
        return pinned + nbytes <= self.host_budget

    def _make_host_room(self, nbytes: int) -> None:
        """Drop least recently used host checkpoints until `nbytes` fit (check _host_can_fit)."""
        while self.host_bytes + nbytes > self.host_budget:
            victim = next(self.checkpoints.unpinned(HOST))
            self.checkpoints.drop(victim.key)
            self._stats.dropped_checkpoints += 1

    def _reclaimable(self) -> tuple[int, int]:
        """(pages, device bytes) that evicting and spilling everything unpinned would free."""
        # A block can go only when nothing in its subtree is pinned (leaves go first).
        held: set[bytes] = set()
        for block in self._blocks.values():
            if block.pins:
                key: bytes | None = block.key
                while key is not None and key not in held:
                    held.add(key)
                    key = self._blocks[key].parent
        pages = sum(len(b.pages) for k, b in self._blocks.items() if k not in held)
        checkpoint_bytes = sum(c.nbytes for c in self.checkpoints.unpinned(DEVICE))
        return pages, pages * self.bytes_per_page + checkpoint_bytes

    def _make_device_room(self, pages: int, extra_bytes: int) -> bool:
        """Free `pages` pages, and bytes for them plus `extra_bytes`.

        Returns False, changing nothing, when even evicting everything unpinned is not enough.
        """
        needed_bytes = pages * self.bytes_per_page + extra_bytes
        if self.allocator.num_free < pages or self.device_bytes + needed_bytes > self.device_budget:
            reclaim_pages, reclaim_bytes = self._reclaimable()
            if (
                self.allocator.num_free + reclaim_pages < pages
                or self.device_bytes - reclaim_bytes + needed_bytes > self.device_budget
            ):
                return False
        # Page slots come only from evicting blocks; bytes come from spilling first.
        evicted, spilled = self._stats.evicted_blocks, self._stats.spills
        while self.allocator.num_free < pages:
            if not self._evict_one_block():
                raise CacheInvariantError("reclaimable pages vanished while evicting")
        while self.device_bytes + needed_bytes > self.device_budget:
            if not self._spill_one() and not self._evict_one_block():
                raise CacheInvariantError("reclaimable bytes vanished while evicting")
        evicted, spilled = self._stats.evicted_blocks - evicted, self._stats.spills - spilled
        if evicted or spilled:
            logger.debug(
                "prefix cache: made room for {} pages + {} bytes: {} checkpoint(s) spilled, "
                "{} block(s) evicted",
                pages,
                extra_bytes,
                spilled,
                evicted,
            )
        return True

    def _make_room_or_raise(self, request_id: str, new_tokens: int, pages: int) -> None:
        if self._make_device_room(pages, 0):
            return
        needed = pages * self.bytes_per_page
        permanent = pages > self.allocator.num_pages or needed > self.device_budget
        if permanent:
            message = (
                f"request {request_id!r}: its {new_tokens} uncached tokens need {needed} bytes of K/V pages "
                f"({pages} pages of {self.bytes_per_page} bytes), more than the whole cache's device budget of "
                f"{self.device_budget} bytes ({self.allocator.num_pages} pages); raise the cache budget or shorten "
                "the prompt"
            )
        else:
            reclaim_pages, reclaim_bytes = self._reclaimable()
            free_bytes = self.device_budget - self.device_bytes + reclaim_bytes
            message = (
                f"request {request_id!r}: its {new_tokens} uncached tokens need {needed} bytes of K/V pages "
                f"({pages} pages) but only {free_bytes} bytes ({self.allocator.num_free + reclaim_pages} pages) "
                f"can be freed now; the rest is pinned by {len(self._reservations)} running request(s) and "
                f"{len(self._live_hits)} held hit(s): retry after they finish"
            )
        raise CacheFullError(message, permanent=permanent)

    def _restore(self, checkpoint) -> bool:
        """Bring a (pinned) host checkpoint back to the device; False if there is no room."""
        if not self._make_device_room(0, checkpoint.nbytes):
            return False
        self.checkpoints.move(checkpoint.key, DEVICE)
        self._stats.restores += 1
        return True

    # ------------------------------------------------------------------ invariants

    def check_invariants(self) -> None:
        """Raise CacheInvariantError if the bookkeeping is inconsistent (see invariants.py)."""
        check_cache(self)
