"""Large chunks with GDN checkpoints inside them (EngineOptions' chunk policy).

A chunk that crosses checkpoint positions takes the GDN states there inside the chunk: the device scan
writes the recurrent state at its chunk boundaries within one call, the conv state is the pre-conv rows
before the position. These tests check that such a checkpoint is the one a chunk boundary there would
give: bit-identical on the device where the two runs do the same arithmetic (the scan carries its state
between GDN chunks the same way inside a call and between calls), against the fp64 reference stack
always, and that a prefix hit restored from one gives the cold run's logits.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ttprefill.engine import Engine, EngineError, EngineOptions
from ttprefill.model.config import get_preset
from ttprefill.model.reference_model import ReferenceModel
from ttprefill.model.weights import random_weights
from ttprefill.ops import gdn
from ttprefill.reference import gdn as ref
from ttprefill.reference.metrics import pcc, rel_rms

CONFIG = get_preset("tiny").with_changes(max_position_embeddings=4096)
WEIGHTS = random_weights(CONFIG, seed=3)
BLOCK = 64


def bf16(x) -> np.ndarray:
    from ttprefill.device.formats import round_to_bf16

    return round_to_bf16(np.asarray(x, np.float32))


def layer_case(T, dims: gdn.GdnDims, seed):
    rng = np.random.default_rng(seed)
    c, hv = dims.conv_channels, dims.v_heads
    params = ref.GdnLayerParams(dims.qk_heads, hv, dims.key_dim, dims.value_dim,
                                conv_weight=(0.5 * rng.standard_normal((c, 4))).astype(np.float32),
                                A_log=np.log(rng.uniform(1, 16, hv)).astype(np.float32),
                                dt_bias=(0.5 * rng.standard_normal(hv)).astype(np.float32),
                                norm_weight=rng.uniform(0.5, 1.5, dims.value_dim).astype(np.float32))
    inputs = dict(qkv=bf16(rng.standard_normal((T, c))), z=bf16(rng.standard_normal((T, hv * dims.value_dim))),
                  a=bf16(rng.standard_normal((T, hv))), b=bf16(rng.standard_normal((T, hv))))
    return params, inputs


@pytest.mark.parametrize("dims", [gdn.GdnDims(2, 4, 64, 64), gdn.GdnDims(8, 16, 64, 64)],
                         ids=["two-program scan", "fused scan"])
def test_layer_states_inside_one_call_equal_the_states_between_calls(sim, dims):
    """The claim the engine's bit-identity rests on, for both scan forms (16 value heads fill a quarter of the
    cores, so the scan is fused): the state the layer core writes at a GDN-chunk boundary inside a call is
    the final state of a call that ends there, and the next call from it continues identically."""
    from ttprefill.ops.gdn.planner import fused_scan_by_default
    from ttprefill.ops.gdn.shapes import ScanShape

    T, chunk, cut = 192, 64, (64, 128)
    assert fused_scan_by_default(ScanShape.of(dims, T, chunk)) == (dims.v_heads == 16)
    params, x = layer_case(T, dims, seed=dims.v_heads)
    y_all, _, final_all, states = gdn.gdn_layer(sim, x["qkv"], x["z"], x["a"], x["b"], params, None, None, chunk,
                                               checkpoints=cut)
    conv, rec, ys = None, None, []
    for a, b in zip((0, *cut), (*cut, T)):
        y, conv, rec, _ = gdn.gdn_layer(sim, x["qkv"][a:b], x["z"][a:b], x["a"][a:b], x["b"][a:b], params, conv, rec,
                                        chunk)
        ys.append(y)
        if b < T:
            assert np.array_equal(states[b], rec), f"state at {b}"
            assert np.array_equal(conv, x["qkv"][b - 3:b]), f"conv state at {b}"
    assert np.array_equal(final_all, rec) and np.array_equal(y_all, np.concatenate(ys))


def engine(backend, chunk, config=CONFIG, weights=WEIGHTS, **opts):
    options = EngineOptions(chunk_tokens=chunk, block_tokens=BLOCK, checkpoint_every_blocks=1, **opts)
    return Engine(config, weights, backend=backend, options=options, model_key="chunk-checkpoints")


def stored_checkpoints(eng) -> dict[int, dict]:
    """Every checkpoint payload the engine hands the prefix cache, by position (a spy on chunk_done)."""
    stored, chunk_done = {}, eng.scheduler.chunk_done

    def spy(request, chunk, checkpoints=None):
        assert sorted(checkpoints or {}) == list(chunk.checkpoints)
        stored.update({p: payload for p, (payload, _) in (checkpoints or {}).items()})
        return chunk_done(request, chunk, checkpoints)

    eng.scheduler.chunk_done = spy
    return stored


def reference_states(config, weights, tokens, position):
    model = ReferenceModel(config, weights, dtype=torch.float64, gdn_chunk=64)
    state = model.new_state()
    model.forward(list(tokens[:position]), state, 0, last_only=True)
    return state


def assert_near_reference(payload, state, what, pcc_min, rel_max):
    for i, rec in payload["recurrent"].items():
        want = state.recurrent_states[i].numpy()
        assert pcc(want, rec) >= pcc_min and rel_rms(want, rec) <= rel_max, f"{what}: GDN layer {i} recurrent"
        conv = state.conv_states[i].numpy()
        assert pcc(conv, payload["conv"][i]) >= pcc_min and rel_rms(conv, payload["conv"][i]) <= rel_max, \
            f"{what}: GDN layer {i} conv"


def test_device_checkpoints_inside_a_chunk_are_the_chunk_boundary_ones():
    """One 256-token chunk (checkpoints at 64, 128, 192 inside it, 256 at its end) against chunks of 64 (each
    checkpoint at a chunk end): the same bits, since tiny's GDN layers all come before its attention layer
    and every op before them works row by row; and both near the fp64 reference at each position."""
    tokens = np.random.default_rng(1).integers(0, CONFIG.vocab_size, 300).tolist()
    runs = {}
    for chunk in (256, 64):
        eng = engine("sim", chunk)
        runs[chunk] = stored_checkpoints(eng)
        result = eng.prefill(tokens)
        assert result.chunks == -(-300 // chunk)
    assert sorted(runs[256]) == sorted(runs[64]) == [64, 128, 192, 256]
    for p in (64, 128, 192, 256):
        big, small = runs[256][p], runs[64][p]
        assert big["num_tokens"] == small["num_tokens"] == p
        for part in ("conv", "recurrent"):
            for i in CONFIG.gdn_layers:
                assert np.array_equal(big[part][i], small[part][i]), f"{part} state of GDN layer {i} at {p}"
        # bf16 activations and bfp8 weights against fp64: the tolerance of the device engine tests
        assert_near_reference(big, reference_states(CONFIG, WEIGHTS, tokens, p), f"checkpoint {p}", 0.999, 0.03)


def test_a_chunks_checkpoints_come_up_in_two_reads_per_gdn_layer():
    """One 256-token chunk with checkpoints at 64, 128, 192 inside it and 256 at its end, counted at the
    simulator's page reads (every host read goes through read_pages): per GDN layer one read of the four
    recurrent states and one of the twelve conv rows (three per checkpoint, row-major bf16, 1024 values a 2 KB
    page), and the logits row once; each read a whole tensor, so a card's reads move nothing more."""
    eng = engine("sim", 256)
    device = eng.model.device
    reads, read_pages = [], device.read_pages
    whole = []  # whether each read takes its whole tensor: a card's reads (ttnn from_device) move nothing less
    device.read_pages = lambda t, first, n: (reads.append(n * t.page_size), whole.append(
        first == 0 and n == t.num_pages)) and read_pages(t, first, n)
    tokens = np.random.default_rng(2).integers(0, CONFIG.vocab_size, 256).tolist()
    try:
        eng.prefill(tokens)
    finally:
        del device.read_pages
    n_gdn = len(CONFIG.gdn_layers)
    hv, k, v, c = (CONFIG.gdn_num_v_heads, CONFIG.gdn_key_head_dim, CONFIG.gdn_value_head_dim,
                   CONFIG.gdn_conv_channels)
    states = [4 * hv * k * v * 4, 4 * 3 * -(-c // 1024) * 2048] * n_gdn
    logits = [-(-CONFIG.vocab_size // 1024) * 2048]
    assert sorted(reads) == sorted(states + logits), (n_gdn, reads)
    assert all(whole)


def test_the_end_state_read_with_the_checkpoints_is_the_state_the_chunk_leaves():
    """sync_end brings the chunk's end state up in the checkpoints' reads (the scan's copy of it, the conv rows
    extracted from the pre-conv activations); bit for bit the ping-pong state tensors the next chunk reads,
    downloaded whole afterwards."""
    from ttprefill.model.stack import ChunkContext

    stack = engine("sim", 256).model
    state = stack.new_state()
    tokens = np.random.default_rng(4).integers(0, CONFIG.vocab_size, 256)
    stack.forward(tokens, state, ChunkContext(0, 256, tuple(range(4)), checkpoints=(64, 128, 192)),
                  need_logits=False, sync_end=True)
    try:
        shared = {i: (state.conv_states[i].numpy().copy(), state.recurrent_states[i].numpy().copy())
                  for i in CONFIG.gdn_layers}
        assert stack.sync_to_host(state) > 0
        for i in CONFIG.gdn_layers:
            assert np.array_equal(shared[i][0], state.conv_states[i].numpy()), f"conv state of GDN layer {i}"
            assert np.array_equal(shared[i][1], state.recurrent_states[i].numpy()), f"recurrent state of layer {i}"
            assert np.abs(shared[i][1]).max() > 0
    finally:
        stack.release(state)


def test_torch_checkpoints_inside_a_chunk_are_the_chunk_boundary_ones():
    """The torch backend (the reference stack on host pages) gives the same checkpoints, also when an
    attention layer comes first (so the GDN states depend on attention over the chunk's prefix)."""
    config = CONFIG.with_changes(layer_types=("full_attention", "linear_attention", "linear_attention",
                                              "full_attention"))
    weights = random_weights(config, seed=8)
    tokens = np.random.default_rng(2).integers(0, config.vocab_size, 260).tolist()
    runs = {}
    for chunk in (256, 64):
        eng = engine("torch", chunk, config, weights)
        runs[chunk] = stored_checkpoints(eng)
        eng.prefill(tokens)
    assert sorted(runs[256]) == sorted(runs[64]) == [64, 128, 192, 256]
    for p in (64, 128, 192, 256):
        want = reference_states(config, weights, tokens, p)
        for chunk in (256, 64):
            got = runs[chunk][p]
            for i in config.gdn_layers:
                rec, conv = want.recurrent_states[i].numpy(), want.conv_states[i].numpy()
                np.testing.assert_allclose(got["recurrent"][i], rec, atol=1e-4 * max(1.0, np.abs(rec).max()))
                np.testing.assert_allclose(got["conv"][i], conv, atol=1e-4 * max(1.0, np.abs(conv).max()))
        for i in config.gdn_layers:
            np.testing.assert_allclose(runs[256][p]["recurrent"][i], runs[64][p]["recurrent"][i], atol=1e-5)


def test_a_hit_on_a_checkpoint_taken_inside_a_chunk_gives_the_cold_logits():
    """The first prompt runs as one chunk with checkpoints at 64 .. 256 inside it; the second shares 200
    tokens with it and resumes from the checkpoint at 192. Its last logits equal a cold run's."""
    rng = np.random.default_rng(12)
    first = rng.integers(0, CONFIG.vocab_size, 300).tolist()
    second = first[:200] + rng.integers(0, CONFIG.vocab_size, 40).tolist()
    warm = engine("sim", 512)
    assert warm.prefill(first).chunks == 1
    cached = warm.prefill(second)
    assert cached.cached_tokens == 192 and cached.checkpoint_bytes_down > 0
    cold = engine("sim", 512).prefill(second)
    assert cold.cached_tokens == 0 and cold.chunks == 1
    np.testing.assert_array_equal(cached.last_logits, cold.last_logits)
    warm.cache.check_invariants()


def test_the_chunk_policy_has_one_budget():
    assert EngineOptions(chunk_tokens=1024).step_token_budget == 1024  # None: one full chunk a step
    assert EngineOptions(chunk_tokens=1024, token_budget_per_step=4096).step_token_budget == 4096
    with pytest.raises(EngineError, match="below chunk_tokens .* cap every chunk"):
        EngineOptions(chunk_tokens=2048, token_budget_per_step=1024)
    with pytest.raises(EngineError, match="more checkpoints than one GDN scan call writes"):
        EngineOptions(chunk_tokens=64 * 400, block_tokens=64)


def test_queued_requests_share_a_prefix_computed_inside_one_chunk():
    """Three prompts sharing 200 tokens, queued together, chunks of 512: the first runs as one chunk and is
    asked for a checkpoint at the shared blocks' end (192), inside that chunk; the others wait for it, start
    there and match the fp64 reference."""
    rng = np.random.default_rng(5)
    prefix = rng.integers(0, CONFIG.vocab_size, 200).tolist()
    prompts = [prefix + rng.integers(0, CONFIG.vocab_size, n).tolist() for n in (100, 30, 60)]
    # a checkpoint every 8 blocks: the only one below 300 tokens would be the prompt end's (256)
    options = EngineOptions(chunk_tokens=512, block_tokens=BLOCK, checkpoint_every_blocks=8)
    eng = Engine(CONFIG, WEIGHTS, backend="torch", options=options, model_key="chunk-checkpoints")
    stored = stored_checkpoints(eng)
    ids = [eng.submit(p) for p in prompts]
    results = {r.request_id: r for r in eng.run()}
    assert [results[i].cached_tokens for i in ids] == [0, 192, 192]
    assert [results[i].chunks for i in ids] == [1, 1, 1]
    assert 192 in stored  # taken inside the first request's only chunk, [0, 300)
    model = ReferenceModel(CONFIG, WEIGHTS, dtype=torch.float64, gdn_chunk=64)
    for i, p in zip(ids, prompts):
        want = model.forward(list(p), model.new_state(), 0, last_only=True).numpy()
        np.testing.assert_allclose(results[i].last_logits, want, atol=2e-4 * np.abs(want).max(), rtol=0)
    eng.cache.check_invariants()
