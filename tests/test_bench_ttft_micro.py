"""`ttprefill bench ttft --mesh 1x2 --micro-batches 2`: each chunk as two micro-batches on the compute sub-device,
the collectives beside them (mesh timing 4). Counts and bytes derived by hand; Qwen3.5-9B, 256 tokens (one chunk,
halves of 128), timing only, modeled."""

from __future__ import annotations

import json

import pytest

from ttprefill import cli
from ttprefill.device.mesh_timing import MESH_TIMING_VERSION
from ttprefill.model.config import get_preset
from ttprefill.options import EngineOptions


def _bench(capsys, *extra):
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "256", "--timing-only", "--json",
                     "--mesh", "1x2", *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_two_micro_batches_hide_collectives_behind_the_other_half(capsys):
    r = _bench(capsys, "--micro-batches", "2")
    cfg = get_preset("qwen3.5-9b")
    L, H = cfg.num_layers, cfg.hidden_size
    assert r["micro_batches"] == 2 and r["mesh_timing_version"] == MESH_TIMING_VERSION
    assert int(MESH_TIMING_VERSION) >= 4  # the version that added micro-batches, or a later one
    assert r["chunks"][0]["micro_batches"] == 2
    sched = r["collective_schedule"]
    # one link's 10 collective cores leave 54, the matmuls on their 6 whole rows
    assert sched["compute_grid"] == [8, 6] and sched["compute_cores"] == 54
    # what adds to TTFT: the programs, what of the collectives they waited for, the host's exposed transfers
    assert r["ttft_s"] == pytest.approx(sum(r["by_op"].values()))
    assert r["by_op"]["collectives"] == pytest.approx(r["collectives_exposed_s"])
    assert 0 < r["collectives_hidden_s"] <= r["collectives_s"]
    assert r["collectives_exposed_s"] + r["collectives_hidden_s"] == pytest.approx(r["collectives_s"])
    # never faster than the programs alone or the collectives alone
    assert r["ttft_s"] >= max(r["device_s"], r["collectives_s"])
    # two halves of 128 tokens, 64 rows a chip: per half and block a gather of 64 rows, a scatter of all 128, each
    # in the tiles of the format its kind carries (EngineOptions.collective_dtype)
    dtype = EngineOptions().collective_dtype
    gather_tile, reduce_tile = dtype.format("gather").tile_bytes, dtype.format("reduce").tile_bytes
    by_kind = r["collectives_by_kind"]
    assert by_kind["reduce_scatter"]["count"] == 2 * 2 * L
    assert by_kind["reduce_scatter"]["bytes_per_chip"] == 2 * 2 * L * (128 * H // 1024) * reduce_tile
    assert by_kind["all_gather"]["count"] == 2 * 2 * L + 2  # and the head's two
    head = r["collectives_by_kind"]["all_gather"]["bytes_per_chip"] - 2 * 2 * L * (64 * H // 1024) * gather_tile
    one = json.loads(_run(capsys, "256"))  # the head's gathers are the same whole or in halves
    assert head == one["collectives_by_kind"]["all_gather"]["bytes_per_chip"] - 2 * L * (128 * H // 1024) * gather_tile


def test_micro_batches_need_a_mesh_and_the_plain_collectives(capsys):
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "256", "--timing-only", "--json",
                     "--micro-batches", "2"])
    _, err = capsys.readouterr()
    assert code != 0 and "--mesh" in err
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "256", "--timing-only", "--json",
                     "--mesh", "1x2", "--micro-batches", "2", "--fused-collectives", "faster"])
    _, err = capsys.readouterr()
    assert code != 0 and "--fused-collectives none" in err


def test_micro_batches_move_the_same_host_data(capsys):
    # 600 tokens: halves of 256 and 344 (whole GDN chunks), checkpoints inside both and at the end
    one = json.loads(_run(capsys, "600"))
    two = json.loads(_run(capsys, "600", "--micro-batches", "2"))
    assert two["chunks"][0]["micro_batches"] == 2 and len(two["chunks"][0]["checkpoints"]) >= 2
    assert two["host_traffic"] == one["host_traffic"]
    assert two["collectives_by_kind"]["reduce_scatter"]["count"] == 2 * one["collectives_by_kind"]["reduce_scatter"]["count"]


def _run(capsys, seq, *extra):
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", seq, "--timing-only", "--json", "--mesh", "1x2",
                     *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out
