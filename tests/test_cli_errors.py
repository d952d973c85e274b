"""The CLI's one error path: bad input gives one line that names the input, the problem and the fix,
exit status 2 and no traceback (unless --debug); --json output is always valid JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ttprefill import cli
from ttprefill.device.program import DataFormat
from ttprefill.engine import EngineError, EngineOptions
from ttprefill.model.config import HFConfigError, from_hf_config, get_preset
from ttprefill.model.weights import WeightsError, load_weights, parameter_shapes


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean_error(code, err, *words):
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line]
    assert lines, "no message"
    for w in words:
        assert w in err, (w, err)


@pytest.fixture
def tokens_file(tmp_path):
    p = tmp_path / "ids.txt"
    p.write_text("1 2 3 4")
    return p


@pytest.mark.parametrize("argv, words", [
    (["bench", "matmul", "--size", "-64"], ["--size", "at least 1"]),
    (["bench", "matmul", "--size", "0"], ["--size"]),
    (["bench", "matmul", "--fidelity", "foo"], ["--fidelity", "invalid choice"]),
    (["bench", "matmul", "--format", "foo"], ["--format", "unknown weight format 'foo'"]),
    (["bench", "attention", "--chunk", "-64"], ["--chunk"]),
    (["bench", "gdn", "--seq", "0"], ["--seq"]),
    (["bench", "gdn", "--seq", "-64"], ["--seq"]),
    (["bench", "attention", "--seq", "128", "--prefix", "128"], ["--prefix", "below --seq"]),
    (["bench", "matmul", "--trace", "/no/such/folder/t.json"], ["--trace", "does not exist"]),
    (["demo", "--requests", "0"], ["--requests"]),
    (["demo", "--requests", "-5"], ["--requests"]),
    (["prefill", "--cache-budget-mb", "inf"], ["--cache-budget-mb", "finite"]),
    (["prefill", "--cache-budget-mb", "nan"], ["--cache-budget-mb"]),
])
def test_bad_arguments_are_refused_before_any_work(capsys, argv, words):
    code, out, err = run_cli(capsys, *argv)
    assert_clean_error(code, err, *words)
    assert out == ""


def test_attention_head_dim_not_supported_names_the_choices(capsys):
    code, _, err = run_cli(capsys, "bench", "attention", "--seq", "64", "--head-dim", "48", "--timing-only")
    assert_clean_error(code, err, "head_dim=48", "64, 128, 256")


def test_gdn_chunk_not_supported(capsys):
    code, _, err = run_cli(capsys, "bench", "gdn", "--seq", "128", "--chunk", "48", "--timing-only")
    assert_clean_error(code, err, "chunk 48")


@pytest.mark.parametrize("make, words", [
    (lambda d: d, ["is a folder"]),
    (lambda d: d / "missing.txt", ["no such file"]),
    (lambda d: (d / "bin.dat").write_bytes(bytes(range(256)) * 4) and d / "bin.dat", ["not a text file"]),
    (lambda d: (d / "words.txt").write_text("1 2 three") and d / "words.txt", ["'three'", "not an integer"]),
])
def test_token_file_problems_name_the_file(capsys, tmp_path, make, words):
    path = make(tmp_path)
    code, _, err = run_cli(capsys, "prefill", "--tokens", str(path), "--backend", "torch")
    assert_clean_error(code, err, *words)


def test_cache_budget_beyond_device_dram(capsys, tokens_file):
    code, _, err = run_cli(capsys, "prefill", "--tokens", str(tokens_file), "--cache-budget-mb", "1e30")
    assert_clean_error(code, err, "cache_budget_bytes", "DRAM")


def test_debug_shows_the_traceback(capsys, tmp_path):
    code, _, err = run_cli(capsys, "prefill", "--tokens", str(tmp_path), "--debug")
    assert code == 2 and "Traceback" in err and "is a folder" in err


@pytest.mark.parametrize("field, value", [
    ("block_tokens", 0), ("gdn_chunk", 0), ("chunk_tokens", -64), ("checkpoint_every_blocks", 0),
    ("cache_budget_bytes", 2**70), ("cache_budget_bytes", 0), ("gdn_fidelity", "HiFi3"),
    ("kv_page_format", DataFormat.Float32),
])
def test_engine_options_refuse_bad_values(field, value):
    with pytest.raises(EngineError, match=field):
        EngineOptions(**{field: value})


def test_config_json_that_is_a_list(tmp_path):
    (tmp_path / "config.json").write_text("[1, 2]")
    with pytest.raises(HFConfigError, match="JSON list"):
        from_hf_config(tmp_path)


def test_config_json_that_is_not_json(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(HFConfigError, match="not a JSON file"):
        from_hf_config(tmp_path)


def _qwen35_text_config(**overrides) -> dict:
    tiny = get_preset("tiny")
    cfg = {
        "model_type": "qwen3_5_text", "vocab_size": tiny.vocab_size, "hidden_size": tiny.hidden_size,
        "num_hidden_layers": tiny.num_layers, "layer_types": list(tiny.layer_types),
        "linear_num_key_heads": tiny.gdn_num_qk_heads, "linear_num_value_heads": tiny.gdn_num_v_heads,
        "linear_key_head_dim": tiny.gdn_key_head_dim, "linear_value_head_dim": tiny.gdn_value_head_dim,
        "num_attention_heads": tiny.attn_num_heads, "num_key_value_heads": tiny.attn_num_kv_heads,
        "head_dim": tiny.attn_head_dim, "intermediate_size": tiny.intermediate_size,
        "rope_theta": tiny.rope_theta, "partial_rotary_factor": tiny.partial_rotary_factor,
    }
    cfg.update(overrides)
    return cfg


@pytest.mark.parametrize("key, value", [("hidden_size", "abc"), ("vocab_size", 1.5), ("head_dim", True),
                                        ("linear_conv_kernel_dim", "4")])
def test_config_key_of_wrong_type_is_named(key, value):
    with pytest.raises(HFConfigError, match=f"'{key}'"):
        from_hf_config(_qwen35_text_config(**{key: value}))


def test_device_backend_refuses_a_conv_width_it_has_no_kernel_for():
    from ttprefill.engine import make_mixers

    config = from_hf_config(_qwen35_text_config(linear_conv_kernel_dim=3))
    with pytest.raises(EngineError, match="linear_conv_kernel_dim is 3"):
        make_mixers("sim", config, 4, EngineOptions())


def test_device_backend_refuses_gdn_head_dims_it_has_no_kernel_for():
    from ttprefill.engine import make_mixers

    config = get_preset("tiny").with_changes(gdn_key_head_dim=16)
    with pytest.raises(EngineError, match="key head dim 16 is not supported.*--backend torch"):
        make_mixers("sim", config, 4, EngineOptions())


def _write_safetensors(folder, tensors):
    from safetensors.numpy import save_file

    save_file(tensors, str(folder / "model.safetensors"))


def test_nan_weights_are_refused_with_the_tensor_name(tmp_path):
    config = get_preset("tiny")
    tensors = {name: np.zeros(shape, np.float32) for name, shape in parameter_shapes(config).items()}
    tensors["model.norm.weight"][3] = np.nan
    _write_safetensors(tmp_path, tensors)
    with pytest.raises(WeightsError, match="model.norm.weight.*NaN"):
        load_weights(tmp_path, config)


@pytest.mark.parametrize("content", [b"", b"\x00" * 7, b"garbage that is not a safetensors header" * 3,
                                     b"\xff\xff\xff\xff\xff\xff\xff\x7f{}"])
def test_broken_safetensors_name_the_file(tmp_path, content):
    (tmp_path / "model.safetensors").write_bytes(content)
    with pytest.raises(WeightsError, match="model.safetensors"):
        load_weights(tmp_path, get_preset("tiny"))


def test_json_output_has_no_nan(capsys):
    cli._emit({"pcc": float("nan"), "nested": {"x": [float("inf"), 1.0]}}, as_json=True)
    out = capsys.readouterr().out
    assert json.loads(out) == {"pcc": None, "nested": {"x": [None, 1.0]}}


def test_prefill_of_none_is_a_clear_error():
    from ttprefill.engine import Engine

    eng = Engine.from_preset("tiny", backend="torch")
    for bad in (None, "1 2 3", 7):
        with pytest.raises(EngineError, match="sequence of integer token ids"):
            eng.prefill(bad)


def test_a_model_without_attention_layers_is_refused_by_name():
    from ttprefill.engine import Engine
    from ttprefill.model.weights import random_weights

    config = get_preset("tiny")
    config = config.with_changes(layer_types=tuple("linear_attention" for _ in config.layer_types))
    with pytest.raises(EngineError, match="no attention layers"):
        Engine(config, random_weights(config, seed=0), backend="torch")
