"""Consistency checks of a PrefixCache, run by the tests after every step.

They recompute from scratch what the cache keeps incrementally: each page's reference count
from its holders (owning block, owning reservation, pins of live hits and reservations), each
block's and checkpoint's pin count, children counts, byte totals and budgets, and every block's
key from its parent key and tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import blocks
from .checkpoints import DEVICE
from .errors import CacheInvariantError

if TYPE_CHECKING:
    from .prefix_cache import PrefixCache


def check_cache(cache: PrefixCache) -> None:
    """Raise CacheInvariantError if the cache's bookkeeping is inconsistent anywhere."""
    problems: list[str] = []
    try:
        cache.allocator.check()
        cache.checkpoints.check()
    except Exception as error:  # noqa: BLE001 - reported with the rest
        problems.append(str(error))

    expected_refs = [0] * cache.allocator.num_pages
    owner: dict[int, str] = {}

    def own(page: int, who: str) -> None:
        if page in owner:
            problems.append(f"page {page} owned by both {owner[page]} and {who}")
        owner[page] = who
        expected_refs[page] += 1

    for block in cache._blocks.values():
        for page in block.pages:
            own(page, f"block {block.index}")
    for reservation in cache._reservations.values():
        for page in reservation.owned_pages:
            own(page, f"request {reservation.request_id!r}")

    block_pins = {key: 0 for key in cache._blocks}
    checkpoint_pins: dict[bytes, int] = {}
    holders = [(f"hit {h.hit_id}", h.handle) for h in cache._live_hits.values()]
    holders += [(f"request {r.request_id!r}", r.pins) for r in cache._reservations.values()]
    for who, pins in holders:
        for key in pins.blocks:
            if key not in cache._blocks:
                problems.append(f"{who} pins a block that is not cached")
                continue
            block_pins[key] += 1
            for page in cache._blocks[key].pages:
                expected_refs[page] += 1
        if pins.checkpoint is not None:
            checkpoint = cache.checkpoints.get(pins.checkpoint)
            if checkpoint is None or checkpoint.tier != DEVICE:
                problems.append(f"{who} pins a checkpoint that is not on the device")
            checkpoint_pins[pins.checkpoint] = checkpoint_pins.get(pins.checkpoint, 0) + 1

    for page in range(cache.allocator.num_pages):
        if cache.allocator.refcount(page) != expected_refs[page]:
            problems.append(
                f"page {page}: refcount {cache.allocator.refcount(page)}, "
                f"holders {expected_refs[page]}"
                + (" (leaked)" if expected_refs[page] == 0 else "")
            )
    _check_blocks(cache, block_pins, problems)
    for checkpoint in cache.checkpoints.all():
        block = cache._blocks.get(checkpoint.key)
        if block is None:
            problems.append("a checkpoint belongs to a block that is not cached")
        elif checkpoint.position != block.end_position:
            problems.append(f"checkpoint at {checkpoint.position} on block ending elsewhere")
        if checkpoint.pins != checkpoint_pins.get(checkpoint.key, 0):
            problems.append(
                f"checkpoint at {checkpoint.position}: {checkpoint.pins} pins, "
                f"{checkpoint_pins.get(checkpoint.key, 0)} holders"
            )
    for reservation in cache._reservations.values():
        for index, key in enumerate(reservation.chain):
            block = cache._blocks.get(key)
            if block is None or block.index != index or key not in reservation.pins.blocks:
                problems.append(f"request {reservation.request_id!r}: chain block {index} lost")
    if cache.device_bytes > cache.device_budget:
        problems.append(f"device bytes {cache.device_bytes} over budget {cache.device_budget}")
    if cache.host_bytes > cache.host_budget:
        problems.append(f"host bytes {cache.host_bytes} over budget {cache.host_budget}")
    if problems:
        raise CacheInvariantError("prefix cache inconsistent:\n  " + "\n  ".join(problems))

def _check_blocks(cache: PrefixCache, block_pins: dict[bytes, int], problems: list[str]) -> None:
    children = {key: 0 for key in cache._blocks}
    for key, block in cache._blocks.items():
        where = f"block {block.index}"
        if blocks.block_hash(block.parent, block.tokens, cache.model_key) != key:
            problems.append(f"{where}: its tokens do not hash to its key")
        if len(block.tokens) != cache.block_tokens or len(block.pages) != cache.pages_per_block:
            problems.append(f"{where}: wrong number of tokens or pages")
        if block.pins != block_pins[key]:
            problems.append(f"{where}: {block.pins} pins but {block_pins[key]} holders")
        if block.parent is None:
            if block.index != 0:
                problems.append(f"{where}: has no parent")
        elif block.parent not in cache._blocks:
            problems.append(f"{where}: its parent was evicted before it")
        else:
            children[block.parent] += 1
            if cache._blocks[block.parent].index != block.index - 1:
                problems.append(f"{where}: parent is not the previous block")
    for key, block in cache._blocks.items():
        if block.children != children[key]:
            problems.append(
                f"block {block.index}: {block.children} children recorded, "
                f"{children[key]} found"
            )
