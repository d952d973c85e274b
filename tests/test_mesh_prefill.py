"""`ttprefill prefill --mesh RxC`: the device stack split tensor-parallel over a simulated mesh
(model/tensor_parallel_device.py). Oracles: Hugging Face transformers and the fp64 torch reference stack
(tests/test_hf_oracle.py's helpers, the same tiny weights); the one-chip run; the prefix cache's cold run; the
host traffic counted from tile sizes and by the mesh's own byte counter."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_hf_oracle import TINY, WEIGHTS, _hf_last_logits, write_tiny_model

from ttprefill import cli
from ttprefill.device.mesh import SimMesh
from ttprefill.engine import Engine, EngineOptions
from ttprefill.model.reference_model import ReferenceModel
from ttprefill.reference.metrics import pcc, rel_rms

TILE, PAGE_VALUES = 32, 1024  # a bf16 tile; a row-major logits page holds 1024 bf16 values


def _tiles(rows, cols):
    return -(-rows // TILE) * -(-cols // TILE)


def _prefill_json(capsys, *argv) -> dict:
    code = cli.main(["prefill", "--json", "--backend", "sim", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_prefill_mesh_1x2_matches_one_chip_and_transformers(tmp_path, capsys):
    folder = write_tiny_model(tmp_path)
    tokens = np.random.default_rng(8).integers(0, TINY.vocab_size, 100).tolist()
    (tmp_path / "tokens.txt").write_text(" ".join(map(str, tokens)))
    runs = {mesh: _prefill_json(capsys, "--model", str(folder), "--tokens", str(tmp_path / "tokens.txt"),
                                "--chunk", "64", "--mesh", mesh, "--scheme", "all_reduce") for mesh in ("1x1", "1x2")}
    one, two = (np.asarray(runs[m]["last_logits"]) for m in ("1x1", "1x2"))
    hf = _hf_last_logits(tokens)
    assert pcc(one, two) >= 0.999
    assert pcc(hf, two) >= 0.99 and rel_rms(hf, two) <= 0.03
    # the top token: transformers' own, or one it scores within bf16 noise of its top (a near tie)
    assert hf[int(np.argmax(two))] >= hf.max() - 0.05
    # the same fields as one chip's, plus the mesh and its collectives
    assert set(runs["1x1"]) == set(runs["1x2"])
    assert runs["1x2"]["mesh"] == [1, 2] and runs["1x2"]["chunks"] == 2
    coll = runs["1x2"]["collectives"]
    # per chunk one all-reduce after each row-parallel projection (two a layer), one logits gather at the end
    assert coll["count"] == {"all_reduce": 2 * 2 * TINY.num_layers, "all_gather": 1}
    H = TINY.hidden_size
    # the partial sums in bfp8 tiles of 1,088 bytes (EngineOptions.collective_dtype's default), the logits bf16
    reduced = sum(2 * TINY.num_layers * _tiles(t, H) * 1088 for t in (64, 36))
    gathered = -(-TINY.vocab_size // 2 // PAGE_VALUES) * 2048  # each chip's row pages
    assert coll["bytes_per_chip"] == reduced + gathered
    assert coll["modeled_s"] > 0 and runs["1x2"]["modeled_s"] > coll["modeled_s"]
    assert runs["1x1"]["collectives"]["count"] == {} and runs["1x1"]["mesh"] == [1, 1]
    # per chunk down: the embeddings (bf16 tiles) only, one copy a chip on the mesh (the page table and the RoPE
    # tables are resident); up: the gathered logits row, once
    embeddings = sum(_tiles(t, H) * 2048 for t in (64, 36))
    assert runs["1x1"]["host_bytes_down"] == embeddings
    assert runs["1x2"]["host_bytes_down"] == 2 * runs["1x1"]["host_bytes_down"]
    assert runs["1x2"]["host_bytes_up"] == 2 * gathered


def test_a_mesh_that_cannot_split_the_model_is_refused_with_the_sizes_that_work(tmp_path, capsys):
    (tmp_path / "tokens.txt").write_text("1 2 3")
    code = cli.main(["prefill", "--backend", "sim", "--tokens", str(tmp_path / "tokens.txt"), "--mesh", "1x3"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "cannot be split over 3 chips" in err and "[1, 2, 4]" in err
    code = cli.main(["prefill", "--backend", "torch", "--tokens", str(tmp_path / "tokens.txt"), "--mesh", "1x2"])
    _, err = capsys.readouterr()
    assert code == 2 and "--backend sim" in err


def cached_and_cold_runs(options: EngineOptions):
    """A warm 1x2 engine's prefix hit and a cold engine's run of the same prompt, checked as on one chip
    (test_device_stack): nothing left on any chip after a request, every byte the mesh moved counted in the
    results, bit-identical logits and final GDN states. Returns (warm engine, first prompt, second prompt, the
    shared prefix)."""
    rng = np.random.default_rng(12)
    prefix = rng.integers(0, TINY.vocab_size, 128).tolist()
    first, second = prefix + rng.integers(0, 1024, 20).tolist(), prefix + rng.integers(0, 1024, 30).tolist()
    warm = Engine(TINY, WEIGHTS, backend="sim", options=options, device=SimMesh((1, 2)))
    mesh = warm.model.device
    resident = mesh.dram_bytes_in_use()  # weights, K/V pools, RoPE tables
    warm.prefill(first)
    assert mesh.dram_bytes_in_use() == resident  # a finished request leaves nothing behind on any chip
    before = mesh.host_traffic.as_dict()
    cached = warm.prefill(second)
    after = mesh.host_traffic.as_dict()
    assert cached.cached_tokens == 128 and cached.checkpoint_bytes_down > 0
    moved = {d: sum(after[d].values()) - sum(before[d].values()) for d in after}
    assert moved["to_device"] == cached.host_bytes_down + cached.checkpoint_bytes_down
    assert moved["to_host"] == cached.host_bytes_up + cached.checkpoint_bytes_up
    cold = Engine(TINY, WEIGHTS, backend="sim", options=options, device=SimMesh((1, 2))).prefill(second)
    assert cold.cached_tokens == 0
    np.testing.assert_array_equal(cached.last_logits, cold.last_logits)
    for i in TINY.gdn_layers:
        np.testing.assert_array_equal(cached.state.recurrent_states[i].numpy(), cold.state.recurrent_states[i].numpy())
        np.testing.assert_array_equal(cached.state.conv_states[i].numpy(), cold.state.conv_states[i].numpy())
    return warm, first, second, prefix


def test_a_cached_mesh_run_equals_its_cold_run_and_every_byte_is_counted():
    """As on one chip (test_device_stack): the warm run resumes at a block boundary where the cold run also cuts
    a chunk, so both run the same programs on the same values (bit-identical logits); the hit's checkpoint is
    the composed logical state, split again over the chips when it goes down."""
    cached_and_cold_runs(EngineOptions(chunk_tokens=64, block_tokens=64, checkpoint_every_blocks=1,
                                       tp_scheme="all_reduce"))


@pytest.mark.parametrize("shape", [(1, 4), (2, 2)])
def test_four_chips_replicate_shared_heads_and_compose_the_whole_state(shape):
    """Four chips: each holds one GDN v head (its q/k head shared with the next chip) and one attention q head
    (its kv head shared likewise); on 2x2 the logits gather runs along the columns, then the rows. Logits
    against the fp64 reference; the GDN states that come up are the model's whole state, against the
    reference stack's."""
    tokens = np.random.default_rng(3).integers(0, TINY.vocab_size, 64).tolist()
    ref = ReferenceModel(TINY, WEIGHTS, dtype=torch.float64, gdn_chunk=64)
    ref_state = ref.new_state()
    expected = ref.forward(tokens, ref_state, 0, last_only=True).numpy()
    result = Engine(TINY, WEIGHTS, backend="sim", options=EngineOptions(chunk_tokens=64),
                    device=SimMesh(shape)).prefill(tokens)
    assert pcc(expected, result.last_logits) >= 0.999 and rel_rms(expected, result.last_logits) <= 0.03
    for i in TINY.gdn_layers:
        for got, want in ((result.state.recurrent_states[i], ref_state.recurrent_states[i]),
                          (result.state.conv_states[i], ref_state.conv_states[i])):
            assert got.shape == want.shape
            assert pcc(want.numpy().ravel(), got.numpy().ravel()) >= 0.999


def test_the_engine_refuses_a_split_the_model_does_not_allow():
    from ttprefill.model.config import get_preset
    from ttprefill.model.tensor_parallel import TensorParallelError
    from ttprefill.model.weights import random_weights

    odd = get_preset("tiny").with_changes(name="tiny-odd", intermediate_size=497)
    with pytest.raises(TensorParallelError, match=r"intermediate size \(497\) is not a multiple of 2.*\[1\]"):
        Engine(odd, random_weights(odd, seed=0), backend="sim", device=SimMesh((1, 2)))


def _checkpoint_at(eng, tokens, position) -> dict:
    hit = eng.cache.lookup(tokens[:position + 1])
    try:
        assert hit.num_tokens == position
        return hit.checkpoint
    finally:
        eng.cache.release(hit)


def test_checkpoints_inside_a_chunk_on_a_mesh_are_the_chunk_boundary_ones():
    """A 128-token chunk takes the GDN states at 64 inside it from every chip's shard; chunks of 64 take them at
    a chunk's end: the same bits (tiny's GDN layers come before its attention layer and every op before them,
    the all-reduces too, works row by row), and near the fp64 reference."""
    tokens = np.random.default_rng(4).integers(0, TINY.vocab_size, 140).tolist()
    payloads = {}
    for chunk in (128, 64):
        options = EngineOptions(chunk_tokens=chunk, block_tokens=64, checkpoint_every_blocks=1)
        eng = Engine(TINY, WEIGHTS, backend="sim", options=options, device=SimMesh((1, 2)))
        eng.prefill(tokens)
        payloads[chunk] = _checkpoint_at(eng, tokens, 64)
    ref = ReferenceModel(TINY, WEIGHTS, dtype=torch.float64, gdn_chunk=64)
    want = ref.new_state()
    ref.forward(tokens[:64], want, 0, last_only=True)
    for i in TINY.gdn_layers:
        for part, ref_part in (("recurrent", want.recurrent_states), ("conv", want.conv_states)):
            np.testing.assert_array_equal(payloads[128][part][i], payloads[64][part][i])
            assert pcc(ref_part[i].numpy().ravel(), payloads[128][part][i].ravel()) >= 0.999


def test_a_vocabulary_that_does_not_divide_is_padded_per_chip():
    """1023 rows over 2 chips: 511 and 512; the short slice is padded with a zero row on its chip and the padding
    dropped from the gathered logits."""
    from ttprefill.model.weights import random_weights

    odd = TINY.with_changes(name="tiny-vocab-1023", vocab_size=1023)
    weights = random_weights(odd, seed=2)
    tokens = np.random.default_rng(5).integers(0, odd.vocab_size, 40).tolist()
    ref = ReferenceModel(odd, weights, dtype=torch.float64, gdn_chunk=64)
    expected = ref.forward(tokens, ref.new_state(), 0, last_only=True).numpy()
    eng = Engine(odd, weights, backend="sim", options=EngineOptions(chunk_tokens=64), device=SimMesh((1, 2)))
    assert eng.model.split.vocab_rows == [511, 512] and eng.model.chip_config.vocab_size == 512
    logits = eng.prefill(tokens).last_logits
    assert logits.shape == (1023,)
    assert pcc(expected, logits) >= 0.999 and rel_rms(expected, logits) <= 0.03
