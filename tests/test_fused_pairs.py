"""bench/fused_pairs.py: a tensor-parallel layer's matmul + collective pairs timed as ttnn's fused ops (modeled).

The tiny preset on a 1x2 line, 128 tokens: the collectives' bytes are derived here from the shapes (each chip's
[T, hidden] bf16 partial sums reduce-scattered over the features, a [T, hidden / 2] shard gathered, one
32-column tile of norm statistics gathered), the matmuls come from the simulator."""

from __future__ import annotations

import pytest

from ttprefill.bench.fused_pairs import RS_BATCH_CHOICES, pair_times, simulated_matmul
from ttprefill.device.mesh_timing import collective_time
from ttprefill.device.program import DataFormat
from ttprefill.model.config import get_preset

T = 128


@pytest.fixture(scope="module")
def tiny():
    cfg = get_preset("tiny")
    return cfg, pair_times(cfg, 2, T, "line", DataFormat.Bfp8_b, "central")


def test_every_pair_is_timed_fused_and_unfused_from_its_bytes(tiny):
    cfg, r = tiny
    assert r["modeled"] and int(r["mesh_timing_version"]) >= 3 and r["matmul_grid_fused"] == [8, 6]
    partial = T * cfg.hidden_size * 2
    rs = collective_time("reduce_scatter", partial, 2, "line", 1).seconds
    ag = collective_time("all_gather", partial // 2, 2, "line", 1).seconds
    stats = collective_time("all_gather", T * 32 * 2, 2, "line", 1).seconds
    for kind, first, row in (("gdn", "in_proj_qkv", "out_proj"), ("attention", "qkv_proj", "o_proj")):
        layer = r["layers"][kind]
        for block, (f, w) in {"mixer": (first, row), "mlp": ("gate_up_proj", "down_proj")}.items():
            b = layer["blocks"][block]
            assert b["all_gather_matmul"]["projection"] == f and b["matmul_reduce_scatter"]["projection"] == w
            assert b["unfused_extra_s"] == pytest.approx(stats + ag + rs, rel=1e-12)
            assert b["norm_stats_all_gather_s"] == pytest.approx(stats, rel=1e-12)
            for pair in (b["all_gather_matmul"], b["matmul_reduce_scatter"]):
                # what the pair adds beyond its matmul on the whole grid, which the chip's programs count
                assert pair["fused_extra_s"] == pytest.approx(pair["seconds"] - (pair["serial_s"] - pair["collective_s"]))
                assert pair["seconds"] >= max(pair["matmul_s"], pair["collective_s"])
            # a mesh of two is a line: ttnn runs the matmul + reduce-scatter fused, not the gather
            assert b["matmul_reduce_scatter"]["ttnn_runs_fused"] and not b["all_gather_matmul"]["ttnn_runs_fused"]
            assert b["fused_extra_s"] == pytest.approx(
                stats + ag + b["matmul_reduce_scatter"]["fused_extra_s"], rel=1e-12)
            assert b["faster_extra_s"] <= min(b["fused_extra_s"], b["unfused_extra_s"]) + 1e-15
            # every batch count that cuts 128 tokens into whole tile rows was tried, one batch among them
            assert b["matmul_reduce_scatter"]["batches_tried"] == [n for n in RS_BATCH_CHOICES if T % (32 * n) == 0]
        assert layer["unfused_extra_s"] == pytest.approx(2 * (stats + ag + rs), rel=1e-12)


def test_the_fused_grid_runs_a_long_matmul_slower_than_the_whole_grid():
    """48 cores against 64 on a compute-bound projection (9B's MLP down on a 2048-token chunk's half): the
    simulator, not a scale factor, says how much."""
    whole = simulated_matmul(2048, 6144, 4096, DataFormat.Bfp8_b, (8, 8), "central")
    fused = simulated_matmul(2048, 6144, 4096, DataFormat.Bfp8_b, (8, 6), "central")
    assert 1.0 < fused.seconds / whole.seconds <= 64 / 48 * 1.05


def test_the_bench_refuses_what_has_no_pairs_to_fuse():
    from ttprefill.bench.fused_pairs import check_fused_bench
    from ttprefill.model.collective_dtype import CollectiveDtype

    check_fused_bench((2, 4), "all_reduce", "none")  # nothing asked, nothing refused
    with pytest.raises(ValueError, match="open the 2x4 mesh as 1x8"):
        check_fused_bench((2, 4), "reduce_scatter", "fused")
    with pytest.raises(ValueError, match="--scheme reduce_scatter"):
        check_fused_bench((1, 2), "all_reduce", "faster")
    with pytest.raises(ValueError, match="unknown fused-collectives mode"):
        check_fused_bench((1, 2), "reduce_scatter", "sometimes")
    # the pairs are timed with bf16 collectives: any bfp8 kind is refused, naming the fix
    check_fused_bench((1, 2), "reduce_scatter", "faster", CollectiveDtype("bf16", "bf16"))
    for gather, reduce in (("bfp8", "bf16"), ("bf16", "bfp8")):
        with pytest.raises(ValueError, match="--collective-dtype bf16"):
            check_fused_bench((1, 2), "reduce_scatter", "faster", CollectiveDtype(gather, reduce))


def test_per_layer_seconds_follow_each_layers_kind(tiny):
    from ttprefill.bench.fused_pairs import FusedLayerCollectives

    cfg, r = tiny
    per_layer = FusedLayerCollectives(cfg, 2, "line", DataFormat.Bfp8_b, "central", "faster")
    layers = per_layer(T)
    assert len(layers) == cfg.num_layers
    for i, (mixer, mlp) in enumerate(layers):
        kind = "attention" if cfg.is_attention_layer(i) else "gdn"
        blocks = r["layers"][kind]["blocks"]
        assert (mixer, mlp) == (blocks["mixer"]["faster_extra_s"], blocks["mlp"]["faster_extra_s"])
    assert per_layer.prompt_seconds([T, T]) == pytest.approx(2 * sum(m + p for m, p in layers))
