"""`ttprefill bench ttft --mesh 1x2 --scheme reduce_scatter --fused-collectives`: the scheme's matmul + collective
pairs timed as ttnn's fused ops (bench/fused_pairs.py, mesh timing 3), modeled. Qwen3.5-9B, 64 tokens.

Checked from outside: the chip's programs are the same either way; the fused-or-unfused choice per pair never
costs more than running every pair unfused on the feature split (the plain scheme's collectives plus one
norm-statistics gather of a [64, 32] bf16 tile column a chip before each block); the breakdown adds up; and the
meshes and schemes with nothing to fuse are refused by name."""

from __future__ import annotations

import json

import pytest

from ttprefill import cli
from ttprefill.device.mesh_timing import collective_time
from ttprefill.model.config import get_preset


def _bench(capsys, *extra):  # bf16 collectives: the fused pairs are timed in bf16 (refused with bfp8)
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "64", "--timing-only", "--json", "--mesh",
                     "1x2", "--scheme", "reduce_scatter", "--collective-dtype", "bf16", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_pairs_the_faster_way_cost_no_more_than_unfused(capsys):
    code, out, err = _bench(capsys)
    assert code == 0, err
    plain = json.loads(out)
    code, out, err = _bench(capsys, "--fused-collectives", "faster")
    assert code == 0, err
    faster = json.loads(out)
    assert plain["fused_collectives"] == "none" and faster["fused_collectives"] == "faster"
    assert faster["chip_compute_s"] == plain["chip_compute_s"]
    assert faster["ttft_s"] == pytest.approx(sum(faster["by_op"].values()))
    cfg = get_preset("qwen3.5-9b")
    stats = collective_time("all_gather", 64 * 32 * 2, 2, "line", 1).seconds
    assert 0 < faster["by_op"]["collectives"] <= plain["by_op"]["collectives"] + 2 * cfg.num_layers * stats + 1e-12
    pairs = faster["fused_pairs"]["64"]
    # an n300 is a line of two: ttnn runs the matmul + reduce-scatter fused, never the gather
    for layer in pairs.values():
        for block in layer["blocks"].values():
            assert block["matmul_reduce_scatter"]["ttnn_runs_fused"]
            assert not block["all_gather_matmul"]["ttnn_runs_fused"]


@pytest.mark.parametrize("extra, message", [
    (("--scheme", "all_reduce"), "--scheme reduce_scatter"),
    (("--model", "qwen3.5-27b", "--mesh", "2x4"), "open the 2x4 mesh as 1x8"),
])
def test_nothing_to_fuse_is_refused_by_name(capsys, extra, message):
    code, out, err = _bench(capsys, "--fused-collectives", "fused", *extra)
    assert code != 0 and message in err


def test_bfp8_collectives_are_refused_naming_the_fix(capsys):
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "64", "--timing-only", "--json", "--mesh",
                     "1x2", "--scheme", "reduce_scatter", "--collective-dtype", "bfp8",
                     "--fused-collectives", "faster"])
    out, err = capsys.readouterr()
    assert code != 0 and "--collective-dtype bf16" in err
