"""The request's page table resident on the device through the engine (tiny model, simulator): per chunk only
the embedding rows go down (bytes from the config), each chunk's update program carries exactly the page ids
the chunk adds (the prefix hit's too on a request's first chunk), and a request served from pages another
request computed, after a third request failed, equals its cold run bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill.engine import Engine, EngineOptions
from ttprefill.model.config import get_preset
from ttprefill.model.weights import random_weights
from ttprefill.ops.attention.page_table import CORE

TINY = get_preset("tiny")
WEIGHTS = random_weights(TINY, seed=5)
TILE = 32
# blocks (= pages) of 64 tokens, one a chunk; a checkpoint at every block, so a hit can end at any block
OPTIONS = EngineOptions(chunk_tokens=64, block_tokens=64, checkpoint_every_blocks=1)


def _record(eng):
    """Per forward() call: the traffic kinds that went down, and the (first entry, page ids) of every page
    table update the chunk dispatched."""
    model, device = eng.model, eng.model.device
    chunks, forward, run = [], model.forward, device.run

    def recording_run(program):
        if program.name.startswith("page_table_update"):
            args = program.kernels[0].runtime_args[CORE]
            chunks[-1]["updates"].append((args[0], list(args[2:2 + args[1]])))
        return run(program)

    def recording_forward(tokens, state, context, **kw):
        before = dict(model.traffic.down)
        chunks.append({"context": context, "updates": []})
        try:
            return forward(tokens, state, context, **kw)
        finally:
            chunks[-1]["down"] = {k: v - before.get(k, 0) for k, v in model.traffic.down.items()
                                  if v != before.get(k, 0)}

    model.forward, device.run = recording_forward, recording_run
    return chunks


def test_per_chunk_only_the_embeddings_go_down_and_the_new_page_ids_go_into_the_table():
    eng = Engine(TINY, WEIGHTS, backend="sim", options=OPTIONS)
    chunks = _record(eng)
    tokens = np.random.default_rng(8).integers(0, TINY.vocab_size, 150).tolist()
    result = eng.prefill(tokens)
    assert [(c["context"].start, c["context"].end) for c in chunks] == [(0, 64), (64, 128), (128, 150)]
    # Each chunk's embedding rows (padded to whole tiles) go down once; the stack uploads the next chunk's while
    # the current one runs (a second input buffer on the second command queue), so a chunk's forward may carry
    # its successor's rows: the prompt's total is what is checked, and that nothing else goes down per chunk.
    embedding_bytes = 0
    for c in chunks:
        down = dict(c["down"])
        down.pop("gdn_state_restore", None)  # the request's starting GDN state: checkpoint_bytes_down
        assert set(down) <= {"embeddings"}
        embedding_bytes += down.get("embeddings", 0)
    rows = sum(-(-c["context"].num_tokens // TILE) * TILE for c in chunks)
    assert embedding_bytes == rows * TINY.hidden_size * 2
    assert "page_table" not in eng.model.traffic.down
    pages = result.page_table
    # one page of 64 tokens a chunk: each chunk's update writes its own page's id and nothing else
    assert [c["updates"] for c in chunks] == [[(0, pages[0:1])], [(1, pages[1:2])], [(2, pages[2:3])]]
    chunk_embeddings = sum(-(-(e - s) // TILE) * TILE * TINY.hidden_size * 2 for s, e in ((0, 64), (64, 128), (128, 150)))
    assert result.host_bytes_down == chunk_embeddings


def test_a_hit_on_pages_of_a_failed_request_equals_the_cold_run():
    rng = np.random.default_rng(21)
    prefix = rng.integers(0, TINY.vocab_size, 192).tolist()
    first = prefix + rng.integers(0, TINY.vocab_size, 30).tolist()
    failing = prefix + rng.integers(0, TINY.vocab_size, 100).tolist()  # chunks [192, 256) and [256, 292)
    third = failing[:256] + rng.integers(0, TINY.vocab_size, 50).tolist()
    warm = Engine(TINY, WEIGHTS, backend="sim", options=OPTIONS)
    device = warm.model.device
    at_start = device.dram_bytes_in_use()
    warm.prefill(first)

    mlp_block, calls = warm.model.runner.mlp_block, []

    def fail_in_second_chunk(*args):
        calls.append(1)
        if len(calls) == len(TINY.layer_types) + 1:  # the second chunk's first MLP block
            raise RuntimeError("injected device fault")
        mlp_block(*args)

    warm.model.runner.mlp_block = fail_in_second_chunk
    with pytest.raises(RuntimeError, match="injected"):
        warm.prefill(failing)
    warm.model.runner.mlp_block = mlp_block
    assert device.dram_bytes_in_use() == at_start  # the failed request's table and states are freed

    chunks = _record(warm)
    cached = warm.prefill(third)
    # served from the failed request's first chunk: its block [192, 256) was published with a checkpoint
    assert cached.cached_tokens == 256
    # one chunk, [256, 306): its update writes the hit's 4 pages and the chunk's own, in one dispatch
    assert len(chunks) == 1 and chunks[0]["updates"] == [(0, cached.page_table[:5])]
    assert device.dram_bytes_in_use() == at_start

    cold = Engine(TINY, WEIGHTS, backend="sim", options=OPTIONS).prefill(third)
    assert cold.cached_tokens == 0
    np.testing.assert_array_equal(cached.last_logits, cold.last_logits)
