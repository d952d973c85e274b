"""How a chunk's tokens split into micro-batches (EngineOptions.micro_batches).

With 2, the device stack runs a chunk as two halves A and B, interleaved block by block (A's mixer, B's mixer,
A's MLP, B's MLP, layer after layer), so that on a mesh the collective that ends one half's block can run beside
the other half's programs. A and B are what two consecutive chunks of the engine would be: B's attention reads A's
K/V of the same layer from the cache pages, B's GDN scan starts from the state A's left, B's positions follow A's.

A is a whole number of units, a unit being both a GDN chunk (so that A's end is a scan chunk boundary: the state
hand-over and a checkpoint there are exact) and a tile row (the device writes K/V and starts attention in whole
32-token tiles). A chunk too short to give A one unit runs as one micro-batch.

Torch-free: EngineOptions validates against it.
"""

from __future__ import annotations

import math
from numbers import Integral

from ttprefill.hw import TILE

MICRO_BATCH_CHOICES = (1, 2)


class MicroBatchError(ValueError):
    """A micro-batch count the stack cannot run; the message names the choices."""


def check_micro_batches(value) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value not in MICRO_BATCH_CHOICES:
        raise MicroBatchError(f"micro_batches must be one of {', '.join(map(str, MICRO_BATCH_CHOICES))} (1: a chunk "
                              f"runs whole; 2: as two halves interleaved per block), got {value!r}")
    return int(value)


def split_unit(gdn_chunk: int) -> int:
    """The granularity of A's length: a whole number of GDN chunks and of tile rows."""
    return math.lcm(gdn_chunk, TILE)


def micro_batch_bounds(tokens: int, micro_batches: int, gdn_chunk: int) -> list[tuple[int, int]]:
    """(first offset, length) of each micro-batch of a chunk of `tokens`: [(0, tokens)] for one, or when the chunk
    is shorter than two units; for 2, A the largest whole number of units up to half the chunk, B the rest (B >= A,
    and B may end ragged, as the chunk does)."""
    check_micro_batches(micro_batches)
    if tokens < 1 or gdn_chunk < 1:
        raise MicroBatchError(f"a chunk of {tokens} tokens with GDN chunks of {gdn_chunk}: both must be positive")
    unit = split_unit(gdn_chunk)
    first = tokens // 2 // unit * unit
    if micro_batches == 1 or first == 0:
        return [(0, tokens)]
    return [(0, first), (first, tokens - first)]
