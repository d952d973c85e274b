"""`ttprefill bench ttft` smoke run: one 64-token chunk of qwen3.5-9b (timing-only), its breakdown adding
up, its host traffic against the device stack's rules counted from tile sizes, its refusals."""

from __future__ import annotations

import json

import pytest

from ttprefill import cli
from ttprefill.model.config import get_preset


def test_ttft_smoke_on_one_chunk(capsys):
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "64", "--timing-only", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    r = json.loads(out)
    cfg = get_preset("qwen3.5-9b")
    assert set(r["by_op"]) == {"matmul", "attention", "gdn", "norms", "rest", "host"}
    assert all(v > 0 for v in r["by_op"].values())
    assert r["ttft_s"] == pytest.approx(sum(r["by_op"].values()))
    # the device waits for part of the host link's time (by_op["host"]); the rest runs beside its programs
    host = r["host_transfer"]
    assert r["ttft_s"] == pytest.approx(r["device_s"] + host["exposed_s"]) and host["exposed_s"] == r["by_op"]["host"]
    assert host["exposed_s"] + host["hidden_s"] == pytest.approx(r["host_transfer_s"])
    assert r["model_version"] and r["timing_only"] and r["weight_format"] == "bfp8"
    assert r["simulated"] == {"gdn_layer_and_mlp_runs": 1, "attention_layer_and_mlp_runs": 1, "lm_head_runs": 1}
    # per layer of a kind the same programs: GDN layers qkv and the merged z|b|a + out_proj + 2 MLP matmuls (gate |
    # up with its SwiGLU, one column group at 64 tokens; down), attention layers the fused qkv + o_proj + the 2 MLP
    # ones (one row slab each at 64 tokens), plus the LM head's
    matmuls = r["programs_per_prefill"]["matmul"]
    lm_head_programs = matmuls - 5 * len(cfg.gdn_layers) - 4 * len(cfg.attention_layers)
    assert lm_head_programs >= 1
    t = r["host_traffic"]
    embeddings = 2 * 64 * cfg.hidden_size  # bf16, two tile rows of 32 tokens
    assert t["host_bytes_down_by_kind"]["embeddings"] == embeddings
    # the page table is resident (its ids go down as runtime args of the update program): no host data
    assert t["host_bytes_down"] == embeddings and "page_table" not in t["host_bytes_down_by_kind"]
    assert "rope_tables" not in t["host_bytes_down_by_kind"]  # resident: uploaded once, as setup
    assert t["setup_bytes_down_by_kind"]["rope_tables"] == 2 * 64 * cfg.rotary_dim * 4  # fp32 cos and sin
    # only the last token's row of logits comes up: bf16 values in 2 KB pages, at most one part-filled page
    # per LM-head chunk (fewer than 16 chunks for any vocabulary here)
    up = t["host_bytes_up"]
    assert up % 2048 == 0 and cfg.vocab_size * 2 <= up < cfg.vocab_size * 2 + 16 * 2048
    # the end state comes up as the conv rows (3 rows of C bf16, row-major in 2 KB pages of 1024 values) and
    # the recurrent state [HV K, V] fp32
    conv = 3 * -(-cfg.gdn_conv_channels // 1024) * 2048
    state = len(cfg.gdn_layers) * (conv + cfg.gdn_num_v_heads * cfg.gdn_key_head_dim * cfg.gdn_value_head_dim * 4)
    assert t["checkpoints"] == 1 and t["checkpoint_bytes_up"] == state
    # Host time by hand from the measured PCIe points (hw.py; tt-metal PR #25791): each blocking call's fixed
    # time plus bytes / the rate at its page size. Down: the embeddings, one call, bf16 tiles (2 KiB pages).
    # Up at the chunk's end, per GDN layer one read of the conv rows (2 KiB pages) and one of the recurrent state
    # (fp32 tiles, 4 KiB pages); the logits row (2 KiB pages) in one read per LM-head chunk (1 to 15).
    down_s = 119.4e-6 + embeddings / 15.071e9
    up_s = 2 * len(cfg.gdn_layers) * 59.5e-6 + len(cfg.gdn_layers) * conv / 9.427e9 + (state - len(
        cfg.gdn_layers) * conv) / 11.462e9
    logits_s = up / 9.427e9
    assert down_s + up_s + logits_s + 59.5e-6 <= r["host_transfer_s"] <= down_s + up_s + logits_s + 15 * 59.5e-6
    assert r["host_transfer"]["seconds_by_kind"]["down embeddings"] == pytest.approx(down_s)
    assert r["host_transfer"]["seconds_by_kind"]["up gdn_checkpoint"] == pytest.approx(up_s)


def test_ttft_chunks_as_the_engine_with_checkpoints_inside(capsys):
    """200 tokens in chunks of 128: the prefix cache checkpoints the last block end (192, blocks of 64 and a
    checkpoint every 4 blocks), inside the second chunk, so no chunk is cut there; its GDN states come up
    as the scan's state slice and the three conv rows before 192 (row-major bf16 pages of 1024 values)."""
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "200", "--chunk", "128", "--timing-only",
                     "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    r = json.loads(out)
    cfg = get_preset("qwen3.5-9b")
    assert [(c["start"], c["tokens"], c["checkpoints"]) for c in r["chunks"]] == [(0, 128, []), (128, 72, [192])]
    assert r["simulated"]["gdn_layer_and_mlp_runs"] == 2
    rows = 3 * -(-cfg.gdn_conv_channels // 1024) * 2048
    recurrent = cfg.gdn_num_v_heads * cfg.gdn_key_head_dim * cfg.gdn_value_head_dim * 4
    t = r["host_traffic"]
    assert t["checkpoints"] == 1 and t["checkpoint_bytes_up"] == len(cfg.gdn_layers) * (rows + recurrent)
    # Beside the programs: the second chunk's embeddings go down during the first chunk, each GDN layer's two
    # reads during the layers after it. The device waits for the first chunk's embeddings (one call, 2 KiB pages),
    # the logits rows, and at most the last GDN layer's two reads (conv rows in 2 KiB pages, the state in 4 KiB).
    host = r["host_transfer"]
    first_s = 119.4e-6 + 128 * cfg.hidden_size * 2 / 15.071e9
    last_reads_s = 2 * 59.5e-6 + rows / 9.427e9 + recurrent / 11.462e9
    waited = first_s + host["seconds_by_kind"]["up logits"]
    assert waited == pytest.approx(host["exposed_s"]) or waited < host["exposed_s"] <= waited + last_reads_s
    assert host["hidden_s"] >= host["seconds_by_kind"]["down embeddings"] - first_s + host["seconds_by_kind"][
        "up gdn_checkpoint"] - last_reads_s


def test_ttft_reads_a_chunks_checkpoints_in_two_calls_per_gdn_layer(capsys):
    """1024 tokens in one chunk: checkpoints every 256 tokens put three inside it (256, 512, 768) and one at
    its end. Per GDN layer the four states come up in two blocking reads (the scan's checkpoint tensor: four
    recurrent states; one tensor of the 4 x 3 conv rows in row-major 2 KB pages): 2 calls, not 3 x 4 + 2."""
    code = cli.main(["bench", "ttft", "--model", "qwen3.5-9b", "--seq", "1024", "--chunk", "1024", "--timing-only",
                     "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    r = json.loads(out)
    cfg = get_preset("qwen3.5-9b")
    n_gdn = len(cfg.gdn_layers)
    assert [(c["start"], c["tokens"], c["checkpoints"]) for c in r["chunks"]] == [(0, 1024, [256, 512, 768, 1024])]
    reads = [t for t in r["host_transfers"] if t["kind"] == "gdn_checkpoint"]
    assert sum(t["calls"] for t in reads) == 2 * n_gdn
    recurrent = cfg.gdn_num_v_heads * cfg.gdn_key_head_dim * cfg.gdn_value_head_dim * 4
    rows = 4 * 3 * -(-cfg.gdn_conv_channels // 1024) * 2048
    assert sum(t["nbytes"] for t in reads) == n_gdn * (rows + 4 * recurrent)
    assert r["host_traffic"]["checkpoint_bytes_up"] == n_gdn * (rows + 4 * recurrent)
    # the calls' fixed time: 2 per GDN layer, at 59.5 us each (hw.py, central)
    moved_s = sum(t["nbytes"] for t in reads) / 9.427e9  # the slowest page size's rate bounds the bytes' time
    assert r["host_transfer"]["seconds_by_kind"]["up gdn_checkpoint"] <= 2 * n_gdn * 59.5e-6 + moved_s


def test_ttft_needs_timing_only(capsys):
    code = cli.main(["bench", "ttft", "--seq", "64"])
    _, err = capsys.readouterr()
    assert code == 2 and "--timing-only" in err


def test_ttft_refuses_bf16_weights_that_do_not_fit(capsys):
    code = cli.main(["bench", "ttft", "--seq", "64", "--timing-only", "--format", "bf16"])
    _, err = capsys.readouterr()
    assert code == 2 and "does not fit" in err
