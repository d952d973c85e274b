"""Token blocks and the chain hash that names them.

A prompt is cut into blocks of `block_tokens` tokens. Block i's key hashes block i-1's key, the
block's own tokens and the model key, so a key names a whole prefix, not one block: two prompts
share block i's key only if they share every token up to the end of block i (and the model). The
hash is blake2b over a fixed byte encoding, so keys are the same in every process and every run
(Python's hash() is salted per process and would not be).

Keys can still collide in principle; the cache keeps each block's tokens and its parent key and
compares them on every lookup, so a collision costs a miss, never wrong state.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Sequence

KEY_BYTES = 16
# Stands in for "no parent" so the first block of every prompt hashes the same way as the others.
ROOT_PARENT = b"\x00" * KEY_BYTES
# blake2b personalisation: keys made here never equal hashes made for another purpose.
_PERSON = b"ttprefill.block"


def block_hash(parent: bytes | None, tokens: Sequence[int], model_key: str) -> bytes:
    """Key of a block: stable across processes; depends on the parent key, tokens and model."""
    digest = hashlib.blake2b(digest_size=KEY_BYTES, person=_PERSON)
    digest.update(ROOT_PARENT if parent is None else parent)
    model_bytes = model_key.encode("utf-8")
    # Length prefixes keep the encoding unambiguous (model key "ab" + tokens != "a" + ...).
    digest.update(struct.pack("<I", len(model_bytes)))
    digest.update(model_bytes)
    digest.update(struct.pack("<I", len(tokens)))
    digest.update(struct.pack(f"<{len(tokens)}q", *tokens))
    return digest.digest()


def block_tokens_at(tokens: Sequence[int], index: int, block_tokens: int) -> tuple[int, ...]:
    """The tokens of block `index` of a prompt (a full block is assumed to exist there)."""
    return tuple(tokens[index * block_tokens : (index + 1) * block_tokens])


def chain_keys(
    tokens: Sequence[int], block_tokens: int, model_key: str, max_blocks: int | None = None
) -> list[bytes]:
    """Keys of the prompt's full blocks, in order (at most `max_blocks` of them)."""
    count = len(tokens) // block_tokens
    if max_blocks is not None:
        count = min(count, max_blocks)
    keys: list[bytes] = []
    parent: bytes | None = None
    for index in range(count):
        # Looked up through the module so tests can force collisions by patching block_hash.
        parent = block_hash(parent, block_tokens_at(tokens, index, block_tokens), model_key)
        keys.append(parent)
    return keys


@dataclass(eq=False)
class CachedBlock:
    """One published block: its identity, the attention pages holding its K/V, and its pins.

    `pins` counts live hits and reservations using the block; a pinned block is never evicted.
    `children` counts cached blocks whose parent this is; only leaves are evicted, so a cached
    block's whole prefix is always cached too.
    """

    key: bytes
    parent: bytes | None
    index: int  # block number inside its prompt: it covers tokens [index*B, (index+1)*B)
    tokens: tuple[int, ...]
    pages: tuple[int, ...]
    pins: int = 0
    children: int = 0

    @property
    def end_position(self) -> int:
        """Prompt position just after this block (where a checkpoint of it applies)."""
        return (self.index + 1) * len(self.tokens)
