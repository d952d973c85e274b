"""`ttprefill bench ttft --mesh`: one chip's share of a tensor-parallel split plus its collectives (modeled).

Checked from outside the code under test: the chip runs the plan's per-chip shapes (the single-chip bench over a
config with half the heads, MLP width and vocabulary costs less than the whole model), the collectives cost at
least what the bytes of the per-layer all-reduces need on one Ethernet link at its raw rate, and the breakdown
adds up; and bench ttft's --chunk. Qwen3.5-9B, 64 tokens, timing only."""

from __future__ import annotations

import json

import pytest

from ttprefill import cli
from ttprefill.hw import ETH_LINK_RAW_BYTES_PER_S
from ttprefill.model.config import get_preset


def _bench(capsys, *extra):
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "64", "--timing-only", "--json", *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_mesh_ttft_is_one_chips_share_plus_collectives(capsys):
    one = _bench(capsys)
    two = _bench(capsys, "--mesh", "1x2", "--scheme", "all_reduce")
    cfg = get_preset("qwen3.5-9b")
    assert two["mesh"] == [1, 2] and two["tp"] == 2 and two["model_version"] == one["model_version"]
    assert two["ttft_s"] == pytest.approx(sum(two["by_op"].values()))
    assert two["ttft_s"] == pytest.approx(two["chip_compute_s"] + two["by_op"]["collectives"] + two["by_op"]["host"])
    # host transfers on an n300: chip 0's PCIe carries both chips' embeddings (a copy each, 2 KiB pages, a call
    # each) and both halves of the GDN states (each chip reads its own: 2 calls per GDN layer per chip); chip 1's
    # share also crosses one Ethernet link, slower than nothing here: the PCIe sets the time (test_host_link)
    embeddings = 2 * 64 * cfg.hidden_size
    # each chip's conv rows: 3 rows of its C / 2 channels, row-major bf16 in 2 KiB pages of 1024 values
    conv = 2 * 3 * -(-cfg.gdn_conv_channels // 2 // 1024) * 2048
    state = len(cfg.gdn_layers) * (conv + cfg.gdn_num_v_heads * cfg.gdn_key_head_dim * cfg.gdn_value_head_dim * 4)
    by_kind = two["host_transfer"]["seconds_by_kind"]
    assert by_kind["down embeddings"] == pytest.approx(2 * 119.4e-6 + 2 * embeddings / 15.071e9)
    calls_s = 2 * 2 * len(cfg.gdn_layers) * 59.5e-6
    # the whole state crosses the PCIe once; its pages are 2 and 4 KiB, so its rate lies between those points
    assert calls_s + state / 11.462e9 < by_kind["up gdn_checkpoint"] < calls_s + state / 9.427e9
    assert two["host_transfer"]["chips_per_link"] == 2
    assert two["by_op"]["host"] == two["host_transfer"]["exposed_s"] < two["host_transfer_s"]
    # half of every layer's matmul work per chip: well under the single chip's, not under a third of it
    assert one["by_op"]["matmul"] / 3 < two["by_op"]["matmul"] < 0.75 * one["by_op"]["matmul"]
    # two all-reduces per layer of the chunk's bf16 activations [64, hidden]; on 2 chips each must move at
    # least half its bytes across the one collective link between them
    all_reduce_bytes = 64 * cfg.hidden_size * 2
    floor = 2 * cfg.num_layers * (all_reduce_bytes / 2) / ETH_LINK_RAW_BYTES_PER_S
    assert two["by_op"]["collectives"] >= floor
    assert 0 < two["collective_share"] < 1
    assert two["mesh_timing_version"]  # the Ethernet model's own version, beside the chip model's


def test_27b_on_a_t3000_splits_its_four_kv_heads_over_eight_chips(capsys):
    """Qwen3.5-27B as 2x4: 24 q heads, 4 kv heads (each on two chips), 48 GDN value heads, 64 layers."""
    r = _bench(capsys, "--model", "qwen3.5-27b", "--mesh", "2x4", "--scheme", "all_reduce")
    cfg = get_preset("qwen3.5-27b")
    assert r["mesh"] == [2, 4] and r["tp"] == 8 and r["model_version"] and r["mesh_timing_version"]
    assert r["ttft_s"] == pytest.approx(sum(r["by_op"].values())) and r["by_op"]["collectives"] > 0
    # two all-reduces a layer of [64, hidden] bf16 over the 4 chips of a row first: the reduce-scatter
    # alone moves 3/4 of it over the row's end link
    x = 64 * cfg.hidden_size * 2
    assert r["collectives_by_kind"]["all_reduce"]["count"] == 2 * cfg.num_layers
    assert r["by_op"]["collectives"] >= 2 * cfg.num_layers * 0.75 * x / ETH_LINK_RAW_BYTES_PER_S


def test_mesh_shape_is_parsed_and_a_split_that_cannot_work_is_named(capsys):
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "64", "--timing-only", "--mesh", "2by4"])
    _, err = capsys.readouterr()
    assert code == 2 and "ROWSxCOLS" in err
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "64", "--timing-only", "--mesh", "1x3"])
    _, err = capsys.readouterr()
    assert code == 2 and "cannot be split over 3 chips" in err and "[1, 2, 4, 8, 16]" in err


def test_chunk_flag_sets_the_ttft_chunking(capsys):
    r = _bench(capsys, "--seq", "128", "--chunk", "64")  # the later --seq wins
    assert r["chunk_tokens"] == 64 and [c["tokens"] for c in r["chunks"]] == [64, 64]
    assert r["simulated"]["attention_layer_and_mlp_runs"] == 2  # the second chunk's attention reads a prefix
