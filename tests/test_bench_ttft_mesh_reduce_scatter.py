"""`ttprefill bench ttft --mesh 1x2 --scheme reduce_scatter`: one chip's programs with the shapes the sequence-parallel
scheme runs (norms, residual adds and embeddings on the chip's rows of the tokens) plus that scheme's collectives
(per block an all_gather and a reduce_scatter), all modeled. Counts and bytes derived by hand; Qwen3.5-9B, 64 tokens,
timing only."""

from __future__ import annotations

import json

import pytest

from ttprefill import cli
from ttprefill.hw import ETH_LINK_RAW_BYTES_PER_S
from ttprefill.model.config import get_preset


def _bench(capsys, *extra):
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "64", "--timing-only", "--json",
                     "--mesh", "1x2", *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_reduce_scatter_times_the_chips_rows_and_its_own_collectives(capsys):
    plain = _bench(capsys, "--scheme", "all_reduce")
    split = _bench(capsys, "--scheme", "reduce_scatter")
    cfg = get_preset("qwen3.5-9b")
    L, H = cfg.num_layers, cfg.hidden_size
    assert split["scheme"] == "reduce_scatter" and plain["scheme"] == "all_reduce"
    assert split["ttft_s"] == pytest.approx(sum(split["by_op"].values()))
    # 64 tokens over 2 chips: 32 rows (one tile row) a chip; per block a gather of them, a scatter of all 64, both in
    # bfp8 tiles (EngineOptions.collective_dtype's default: 1,088 bytes a 1,024-value tile); the head's rows bf16
    bfp8 = 1088 / 1024
    assert split["collective_dtype"] == "gather=bfp8,reduce=bfp8"
    by_kind = split["collectives_by_kind"]
    assert by_kind["reduce_scatter"]["count"] == 2 * L
    assert by_kind["reduce_scatter"]["bytes_per_chip"] == 2 * L * 64 * H * bfp8
    vocab_shard = cfg.vocab_size // 2
    assert by_kind["all_gather"]["count"] == 2 * L + 2  # and the final norm's tile row, the logits row
    assert by_kind["all_gather"]["bytes_per_chip"] == 2 * L * 32 * H * bfp8 + 32 * H * 2 + vocab_shard * 2
    # each chip's half of the embeddings goes down, not the whole chunk
    assert split["host_traffic"]["host_bytes_down_by_kind"]["embeddings"] == 32 * H * 2
    assert plain["host_traffic"]["host_bytes_down_by_kind"]["embeddings"] == 64 * H * 2
    # the residual adds and the decoder norms (alone or fused, ops/norm) run on half the rows; the same programs,
    # the same mixers
    assert split["programs_per_prefill"] == plain["programs_per_prefill"]
    assert split["by_op"]["rest"] + split["by_op"]["norms"] < plain["by_op"]["rest"] + plain["by_op"]["norms"]
    assert split["by_op"]["gdn"] == plain["by_op"]["gdn"] and split["by_op"]["attention"] == plain["by_op"]["attention"]
    # a reduce-scatter over 2 chips moves at least half its input over the link between them, an all-gather its
    # shard: per block at least 64 * H bytes cross it one way
    assert by_kind["reduce_scatter"]["seconds"] + by_kind["all_gather"]["seconds"] >= \
        2 * L * (64 * H * bfp8 / 2) / ETH_LINK_RAW_BYTES_PER_S
