"""EngineOptions.collective_dtype (model/collective_dtype.py): what the tensor-parallel collectives carry. The setting
and its errors; the tiny model prefilled on a simulated n300 with each kind in bf16 or bfp8 against the fp64
reference stack and transformers, the collectives' bytes derived by hand from the tile sizes (bf16 2,048 bytes a
tile, bfp8 1,088); the analytic op listing's bytes and pages, and the Ethernet model's time following them."""

from __future__ import annotations

import numpy as np
import pytest
from test_hf_oracle import TINY, _hf_last_logits, write_tiny_model
from test_mesh_prefill import _prefill_json, _tiles

from ttprefill import cli
from ttprefill.device.mesh_timing import collective_time
from ttprefill.hw import ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR
from ttprefill.model.collective_dtype import CollectiveDtype, CollectiveDtypeError
from ttprefill.model.config import get_preset
from ttprefill.model.tensor_parallel import collective_times, per_chip_ops
from ttprefill.options import EngineError, EngineOptions
from ttprefill.reference.metrics import pcc, rel_rms

TILE_BYTES = {"bf16": 2048, "bfp8": 1088}


def test_the_setting_parses_both_kinds_or_each_and_names_the_choices_when_wrong():
    assert CollectiveDtype.parse("bf16") == CollectiveDtype("bf16", "bf16")
    assert CollectiveDtype.parse("gather=bf16,reduce=bfp8") == CollectiveDtype("bf16", "bfp8")
    assert CollectiveDtype.parse("gather=bf16").reduce == EngineOptions().collective_dtype.reduce
    assert str(CollectiveDtype("bfp8", "bf16")) == "gather=bfp8,reduce=bf16"
    with pytest.raises(CollectiveDtypeError, match="choose one of bf16, bfp8"):
        CollectiveDtype("fp8", "bf16")
    with pytest.raises(CollectiveDtypeError, match="kinds gather, reduce"):
        CollectiveDtype.parse("scatter=bfp8")
    with pytest.raises(EngineError, match="CollectiveDtype.parse"):
        EngineOptions(collective_dtype="bfp8")


def test_the_command_line_refuses_a_bad_dtype(capsys):
    assert cli.main(["bench", "ttft", "--mesh", "1x2", "--collective-dtype", "gather=fp4"]) == 2
    assert "gather='fp4': choose one of bf16, bfp8" in capsys.readouterr().err


@pytest.mark.parametrize("dtype", ["gather=bfp8,reduce=bf16", "gather=bf16,reduce=bfp8"])
def test_prefill_on_1x2_with_each_kind_in_bfp8_matches_one_chip_and_transformers(tmp_path, capsys, dtype):
    folder = write_tiny_model(tmp_path)
    tokens = np.random.default_rng(8).integers(0, TINY.vocab_size, 100).tolist()
    (tmp_path / "tokens.txt").write_text(" ".join(map(str, tokens)))
    common = ("--model", str(folder), "--tokens", str(tmp_path / "tokens.txt"), "--chunk", "64")
    one = np.asarray(_prefill_json(capsys, *common, "--mesh", "1x1")["last_logits"])
    run = _prefill_json(capsys, *common, "--mesh", "1x2", "--scheme", "reduce_scatter", "--collective-dtype", dtype)
    two, hf = np.asarray(run["last_logits"]), _hf_last_logits(tokens)
    assert pcc(one, two) >= 0.999
    assert pcc(hf, two) >= 0.99 and rel_rms(hf, two) <= 0.03
    # per chunk and layer two gathers of each chip's [R, H] normed rows and two reduce-scatters of the [2 R, H]
    # partial sums, each in its kind's tiles; the head's tile row and logits row bf16
    d = CollectiveDtype.parse(dtype)
    L, H = TINY.num_layers, TINY.hidden_size
    rows = {64: 32, 36: 32}  # tokens a chip, padded to whole tile rows
    blocks = sum(2 * L * (_tiles(r, H) * TILE_BYTES[d.gather] + _tiles(2 * r, H) * TILE_BYTES[d.reduce])
                 for r in rows.values())
    head = _tiles(32, H) * 2048 + -(-TINY.vocab_size // 2 // 1024) * 2048
    assert run["collectives"]["bytes_per_chip"] == blocks + head


def test_the_op_listing_sizes_each_collective_by_its_format_and_the_link_model_follows():
    cfg = get_preset("qwen3.5-9b")
    bf16 = per_chip_ops(cfg, 2, 2048, 2048, "reduce_scatter", collective_dtype=CollectiveDtype("bf16", "bf16"))
    mixed = per_chip_ops(cfg, 2, 2048, 2048, "reduce_scatter", collective_dtype=CollectiveDtype("bfp8", "bf16"))
    gather = [c for c in mixed["chunks"][0]["layers"][0]["collectives"] if c["kind"] == "all_gather"][0]
    scatter = [c for c in mixed["chunks"][0]["layers"][0]["collectives"] if c["kind"] == "reduce_scatter"][0]
    # 1024 of 2048 rows a chip, hidden 4096: 32 x 128 tiles gathered, 64 x 128 summed
    assert (gather["nbytes_per_chip"], gather["page_bytes"]) == (32 * 128 * 1088, 1088)
    assert (scatter["nbytes_per_chip"], scatter["page_bytes"]) == (64 * 128 * 2048, 2048)
    t16 = collective_times(bf16, (1, 2), "line")["by_kind"]
    t8 = collective_times(mixed, (1, 2), "line")["by_kind"]
    assert t8["reduce_scatter"] == t16["reduce_scatter"]
    one = collective_time("all_gather", 32 * 128 * 1088, 2, "line", ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR, "central",
                          1088).seconds
    one16 = collective_time("all_gather", 32 * 128 * 2048, 2, "line", ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR, "central",
                            2048).seconds
    layers = 2 * cfg.num_layers  # the head's two gathers (its tile row, the logits row) stay bf16
    head = t16["all_gather"]["seconds"] - layers * one16
    assert t8["all_gather"]["seconds"] == pytest.approx(layers * one + head)
    assert t8["all_gather"]["seconds"] < 0.6 * t16["all_gather"]["seconds"]
