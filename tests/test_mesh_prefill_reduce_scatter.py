"""`ttprefill prefill --mesh RxC --scheme reduce_scatter`: the device stack split tensor-parallel with the residual
stream split by tokens between blocks (model/tensor_parallel_device.py). Oracles: Hugging Face transformers and
the fp64 torch reference stack (tests/test_hf_oracle.py's tiny weights); the one-chip run; the prefix cache's cold
run; collective counts and bytes derived by hand from the scheme (per block an all_gather of each chip's normed
rows, a reduce_scatter of the padded partial sums)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_hf_oracle import TINY, WEIGHTS, _hf_last_logits, write_tiny_model
from test_mesh_prefill import _prefill_json, _tiles, cached_and_cold_runs

from ttprefill import cli
from ttprefill.device.mesh import SimMesh
from ttprefill.engine import Engine, EngineError, EngineOptions
from ttprefill.model.reference_model import ReferenceModel
from ttprefill.reference.metrics import pcc, rel_rms

TILE, PAGE_VALUES, BF16_TILE, BFP8_TILE = 32, 1024, 2048, 1088
RS = "reduce_scatter"


def _rows_a_chip(tokens: int, chips: int) -> int:
    """Each chip's share of a chunk's tokens, padded to whole tile rows (written out here, not taken from the code)."""
    rows = -(-tokens // chips)
    return -(-rows // TILE) * TILE


def test_prefill_reduce_scatter_1x2_matches_one_chip_and_transformers(tmp_path, capsys):
    folder = write_tiny_model(tmp_path)
    tokens = np.random.default_rng(8).integers(0, TINY.vocab_size, 100).tolist()
    (tmp_path / "tokens.txt").write_text(" ".join(map(str, tokens)))
    common = ("--model", str(folder), "--tokens", str(tmp_path / "tokens.txt"), "--chunk", "64")
    one = _prefill_json(capsys, *common, "--mesh", "1x1")
    two = _prefill_json(capsys, *common, "--mesh", "1x2", "--scheme", RS)
    hf = _hf_last_logits(tokens)
    a, b = np.asarray(one["last_logits"]), np.asarray(two["last_logits"])
    assert pcc(a, b) >= 0.999
    assert pcc(hf, b) >= 0.99 and rel_rms(hf, b) <= 0.03
    assert hf[int(np.argmax(b))] >= hf.max() - 0.05
    assert set(one) == set(two) and two["mesh"] == [1, 2] and two["chunks"] == 2
    coll = two["collectives"]
    L, H = TINY.num_layers, TINY.hidden_size
    # per chunk and layer: 2 gathers of each chip's normed rows, 2 scatters of the [2 R, H] partial sums; at the end
    # the final norm's tile row gathered, then the logits rows
    assert coll["count"] == {"all_gather": 2 * 2 * L + 2, "reduce_scatter": 2 * 2 * L}
    rows = {t: _rows_a_chip(t, 2) for t in (64, 36)}  # 32 and 32: the 36-token chunk is padded to 64 rows
    # the normed rows and the partial sums in bfp8 (EngineOptions.collective_dtype's default); the head's rows bf16
    per_layer = sum(2 * (_tiles(rows[t], H) + _tiles(2 * rows[t], H)) * BFP8_TILE for t in rows)
    head = _tiles(TILE, H) * BF16_TILE + -(-TINY.vocab_size // 2 // PAGE_VALUES) * BF16_TILE
    assert coll["bytes_per_chip"] == L * per_layer + head
    # the embeddings go down once, each chip its rows (not a copy a chip as under all_reduce)
    assert two["host_bytes_down"] == sum(2 * _tiles(rows[t], H) * BF16_TILE for t in rows)
    # here as many tiles as one chip's copy: 64 + 36 tokens are 2 + 2 tile rows on one chip, 1 + 1 on each of two
    assert two["host_bytes_down"] == one["host_bytes_down"]
    assert two["host_bytes_up"] == 2 * -(-TINY.vocab_size // 2 // PAGE_VALUES) * BF16_TILE  # the gathered logits row


@pytest.mark.parametrize("shape", [(1, 4), (2, 2)])
def test_four_chips_split_by_tokens_against_the_fp64_reference(shape):
    """Four chips: the 36-token second chunk is padded to 4 x 32 rows, so its last token lives on chip 1 (of 0..3),
    whose final-norm tile row the head gathers; on 2x2 the gathers run along the columns, then the rows, the
    reduce-scatters along the rows, then the columns (a wrong order would permute the token rows). Logits and
    the composed GDN states (the model's logical state) against the fp64 reference."""
    tokens = np.random.default_rng(3).integers(0, TINY.vocab_size, 100).tolist()
    ref = ReferenceModel(TINY, WEIGHTS, dtype=torch.float64, gdn_chunk=64)
    ref_state = ref.new_state()
    expected = ref.forward(tokens, ref_state, 0, last_only=True).numpy()
    eng = Engine(TINY, WEIGHTS, backend="sim", options=EngineOptions(chunk_tokens=64, tp_scheme=RS),
                 device=SimMesh(shape))
    result = eng.prefill(tokens)
    assert pcc(expected, result.last_logits) >= 0.999 and rel_rms(expected, result.last_logits) <= 0.03
    for i in TINY.gdn_layers:
        for got, want in ((result.state.recurrent_states[i], ref_state.recurrent_states[i]),
                          (result.state.conv_states[i], ref_state.conv_states[i])):
            assert got.shape == want.shape
            assert pcc(want.numpy().ravel(), got.numpy().ravel()) >= 0.999
    # a 1-D fabric runs a collective over one mesh axis at a time: on 2x2 the reduce-scatter along the rows then
    # the columns (the chunks in row-major chip order), the gather along the columns then the rows
    gathers_a_gather = scatters_a_reduce = 2 if shape == (2, 2) else 1
    count = eng.model.collectives.count
    assert count["reduce_scatter"] == scatters_a_reduce * 2 * 2 * TINY.num_layers
    assert count["all_gather"] == gathers_a_gather * (2 * 2 * TINY.num_layers + 2)


def test_the_last_token_on_the_first_chip():
    """84 tokens in chunks of 64: the last chunk's 20 tokens all live on chip 0 of 2 (32 rows a chip), chip 1 holds
    padding only; the logits are still the last token's."""
    tokens = np.random.default_rng(6).integers(0, TINY.vocab_size, 84).tolist()
    ref = ReferenceModel(TINY, WEIGHTS, dtype=torch.float64, gdn_chunk=64)
    expected = ref.forward(tokens, ref.new_state(), 0, last_only=True).numpy()
    got = Engine(TINY, WEIGHTS, backend="sim", options=EngineOptions(chunk_tokens=64, tp_scheme=RS),
                 device=SimMesh((1, 2))).prefill(tokens).last_logits
    assert pcc(expected, got) >= 0.999 and rel_rms(expected, got) <= 0.03


def test_a_cached_run_equals_its_cold_run_and_its_checkpoints_are_the_logical_state():
    """The warm run resumes at a block boundary where the cold run also cuts a chunk: the same programs on the same
    values, bit-identical logits and states. The checkpoint the hit restored is the model's whole GDN state (the
    shapes one chip keeps, the values of the all_reduce split and of one chip within bf16), so any mesh restores it."""
    warm, first, second, prefix = cached_and_cold_runs(
        EngineOptions(chunk_tokens=64, block_tokens=64, checkpoint_every_blocks=1, tp_scheme=RS))
    # the checkpoint at 128 against one chip's and the fp64 reference's state there
    hit = warm.cache.lookup(second[:129])
    try:
        payload = hit.checkpoint
    finally:
        warm.cache.release(hit)
    one = Engine(TINY, WEIGHTS, backend="sim", options=EngineOptions(chunk_tokens=64, block_tokens=64,
                                                                     checkpoint_every_blocks=1))
    one.prefill(first)
    hit = one.cache.lookup(second[:129])
    try:
        single = hit.checkpoint
    finally:
        one.cache.release(hit)
    ref = ReferenceModel(TINY, WEIGHTS, dtype=torch.float64, gdn_chunk=64)
    want = ref.new_state()
    ref.forward(prefix, want, 0, last_only=True)
    for i in TINY.gdn_layers:
        for part, ref_part in (("recurrent", want.recurrent_states), ("conv", want.conv_states)):
            assert payload[part][i].shape == single[part][i].shape
            assert pcc(single[part][i].ravel(), payload[part][i].ravel()) >= 0.999
            assert pcc(ref_part[i].numpy().ravel(), payload[part][i].ravel()) >= 0.999


def test_an_unknown_scheme_is_refused_naming_the_ones_there_are(tmp_path, capsys):
    with pytest.raises(EngineError, match="tp_scheme must be one of all_reduce, reduce_scatter"):
        EngineOptions(tp_scheme="ring_attention")
    (tmp_path / "tokens.txt").write_text("1 2 3")
    code = cli.main(["prefill", "--backend", "sim", "--tokens", str(tmp_path / "tokens.txt"), "--scheme", "bogus"])
    _, err = capsys.readouterr()
    assert code == 2 and "all_reduce" in err and "reduce_scatter" in err
