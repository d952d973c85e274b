"""Per-role weight formats (EngineOptions.weight_format, ops/linear/weight_formats.py): the setting read and refused,
the command line reaching the engine and bench ttft, the memory plan counting bfp4 tiles at 576 bytes, and the whole
model with tt-metal's Qwen3.5 demo MLP (LoFi, bfp4 gate/up, bfp8 down) against Hugging Face transformers in fp64
(test_hf_oracle's oracle) on one chip and on a 1x2 mesh.

`.venv/bin/python tests/test_weight_formats.py` prints the measurement the bounds below were set from."""

from __future__ import annotations

import numpy as np
import pytest
from test_hf_oracle import TINY, against_transformers, tiny_sim_engine

from ttprefill.device.program import DataFormat
from ttprefill.engine import Engine, EngineOptions
from ttprefill.model.weights import random_weights
from ttprefill.ops.linear.fidelity import ROLES, ProjectionFidelity
from ttprefill.ops.linear.weight_formats import WeightFormatError, WeightFormats
from ttprefill.options import EngineError

WEIGHTS = random_weights(TINY, seed=0)  # Engine.from_preset("tiny")'s weights
PROMPT = 150
LOFI_MLP = "mlp_gate_up=LoFi,mlp_down=LoFi"
DEMO_MLP = "bfp8,mlp_gate_up=bfp4"  # with LOFI_MLP: the demo's MLP (down stays bfp8, the default)
# The configurations main() measures: (name, weight format, matmul fidelity).
CONFIGS = (("default", "bfp8", None), ("LoFi MLP", "bfp8", LOFI_MLP), ("LoFi MLP + bfp4 gate/up", DEMO_MLP, LOFI_MLP))
# Measured by main() (simulator arithmetic, 150 tokens, default chunk), last-token logits against fp64
# transformers, rel RMS / PCC:
#                              1x1              1x2
#   default                    0.0145/0.999902  0.0155/0.999892
#   LoFi MLP                   0.0257/0.999674  0.0258/0.999670
#   LoFi MLP + bfp4 gate/up    0.0758/0.997118  0.0763/0.997076
# bfp4 gate/up weights triple LoFi's error (a bfp4 value keeps 3 mantissa bits; one projection against fp64:
# tests/ops/test_linear.py, rel RMS 0.11). The bounds give the demo configuration's worst about 1.5x room.
DEMO_REL_RMS_BOUND = 0.115
DEMO_PCC_BOUND = 0.9955


def _prompt() -> list[int]:
    return np.random.default_rng(31).integers(0, TINY.vocab_size, PROMPT).tolist()


def _errors(weight_format: str, fidelity: str | None, mesh: tuple[int, int]) -> dict:
    options = EngineOptions(weight_format=weight_format,
                            matmul_fidelity=ProjectionFidelity.parse(fidelity) if fidelity else ProjectionFidelity())
    tokens = _prompt()
    with tiny_sim_engine(WEIGHTS, options, mesh) as engine:
        logits = engine.prefill(tokens).last_logits
    return against_transformers(tokens, logits, WEIGHTS)


@pytest.mark.parametrize("mesh", [(1, 1), (1, 2)])
def test_the_demo_mlp_lofi_and_bfp4_gate_up_matches_transformers(mesh):
    row = _errors(DEMO_MLP, LOFI_MLP, mesh)
    assert row["rel_rms"] <= DEMO_REL_RMS_BOUND and row["pcc"] >= DEMO_PCC_BOUND, row


@pytest.mark.parametrize("mesh", [(1, 1), (1, 2)])
def test_the_engine_holds_gate_up_in_bfp4_and_the_rest_in_bfp8(mesh):
    """The weights the device stack makes take their role's format: the paired gate|up in bfp4, every other
    projection (down, the mixers', the LM head) in bfp8, on one chip and in the tensor-parallel split (whose
    per-chip sources are made anew: the accuracy bound above would pass with bfp8 gate/up too)."""
    with tiny_sim_engine(WEIGHTS, EngineOptions(weight_format=DEMO_MLP), mesh) as engine:
        stack = engine.mixers  # the DeviceStack
        for lw in stack.layers:
            assert lw.gate_up.data_format == DataFormat.Bfp4_b
            mixer = [lw.mixer.qkv, lw.mixer.o_proj] if hasattr(lw.mixer, "qkv") else \
                [lw.mixer.in_qkv, lw.mixer.in_zba, lw.mixer.out_proj]
            assert {w.data_format for w in [lw.down_proj, *mixer]} == {DataFormat.Bfp8_b}
        assert {c.data_format for c in stack.lm_head.chunks} == {DataFormat.Bfp8_b}


def test_a_setting_reads_as_a_base_and_role_changes():
    assert WeightFormats.parse("bfp8") == WeightFormats() == WeightFormats.uniform(DataFormat.Bfp8_b)
    demo = WeightFormats.parse(DEMO_MLP)
    assert demo.of("mlp_gate_up") == DataFormat.Bfp4_b
    assert all(demo.of(r) == DataFormat.Bfp8_b for r in ROLES if r != "mlp_gate_up")
    assert WeightFormats.parse("mlp_gate_up=bfp4") == demo  # roles alone change the defaults
    mixed = WeightFormats.parse("bf16,mlp_gate_up=bfp4,mlp_down=bfp4")
    assert mixed.mlp_down == DataFormat.Bfp4_b and mixed.gdn_in == DataFormat.Float16_b
    for spec in (DEMO_MLP, "bf16,mlp_gate_up=bfp4,mlp_down=bfp4", "bfp4", "bf16"):
        assert WeightFormats.parse(WeightFormats.parse(spec).describe()) == WeightFormats.parse(spec)
    assert WeightFormats.parse(DEMO_MLP).describe() == DEMO_MLP


@pytest.mark.parametrize("spec, words", [
    ("fp8", "unknown weight format 'fp8'"), ("bfp8,mlp=bfp4", "write role=format"),
    ("bfp8,mlp_gate_up=bfp4,mlp_gate_up=bfp8", "set twice"), ("", "give a format"),
    ("mlp_down=bfp2", "choose one of bf16, bfp8, bfp4")])
def test_a_bad_setting_is_refused_with_the_fix(spec, words):
    with pytest.raises(WeightFormatError, match=words):
        WeightFormats.parse(spec)
    with pytest.raises(EngineError, match="EngineOptions.weight_format"):
        EngineOptions(weight_format=spec)


def test_prefill_flags_set_the_engine_options_and_leaving_them_out_keeps_the_defaults():
    from ttprefill import cli
    from ttprefill.engine_cli import engine_options

    parser = cli.build_parser()
    given = engine_options(parser.parse_args(["prefill", "--tokens", "-", "--weights", DEMO_MLP,
                                              "--matmul-fidelity", LOFI_MLP]))
    assert given.weight_formats == WeightFormats.parse(DEMO_MLP)
    assert given.matmul_fidelity == ProjectionFidelity.parse(LOFI_MLP)
    left_out = engine_options(parser.parse_args(["prefill", "--tokens", "-"]))
    assert left_out.weight_format == "bfp8" and left_out.matmul_fidelity == ProjectionFidelity()


@pytest.mark.parametrize("argv, words", [
    (["prefill", "--weights", "bfp8,mlp=bfp4"], "argument --weights: 'mlp=bfp4'"),
    (["bench", "ttft", "--format", "fp8"], "argument --format: unknown weight format 'fp8'"),
    (["prefill", "--matmul-fidelity", "mlp_gate_up=Lo"], "argument --matmul-fidelity: unknown math fidelity"),
    (["bench", "matmul", "--format", "bfp4"], "per-role weight formats and bfp4 are for bench ttft")])
def test_the_command_line_refuses_a_bad_setting_naming_the_fix(capsys, argv, words):
    from ttprefill import cli

    assert cli.main(argv) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("mesh", ["1x1", "1x2"])
def test_bench_ttft_format_reaches_the_weights_it_times(monkeypatch, mesh):
    from ttprefill import bench, cli
    from ttprefill.bench import ttft, ttft_mesh

    seen = []
    monkeypatch.setattr(ttft, "ttft_bench", lambda *args, **kwargs: seen.append(args[2]) or {})
    monkeypatch.setattr(ttft_mesh, "mesh_ttft_bench", lambda *args, **kwargs: seen.append(args[4]) or {})
    args = cli.build_parser().parse_args(["bench", "ttft", "--timing-only", "--mesh", mesh, "--format", DEMO_MLP])
    bench.run("ttft", cli.bench_arguments(args))
    assert seen == [DEMO_MLP]


def test_the_memory_plan_counts_bfp4_gate_up_tiles_at_576_bytes():
    """Against the tiles worked by hand: each layer's gate_proj and up_proj ([I, H] each) in 576-byte tiles instead
    of 1,088, every other matrix unchanged."""
    from ttprefill.model.config import get_preset
    from ttprefill.model.memory_plan import weight_bytes

    cfg = get_preset("qwen3.5-9b")
    H, I = cfg.hidden_size, cfg.intermediate_size
    gate_up_tiles = cfg.num_layers * 2 * (I // 32) * (H // 32)
    assert weight_bytes(cfg, DEMO_MLP) == weight_bytes(cfg, "bfp8") - gate_up_tiles * (1088 - 576)
    down_tiles = cfg.num_layers * (H // 32) * (I // 32)
    assert (weight_bytes(cfg, "bfp8,mlp_gate_up=bfp4,mlp_down=bfp4")
            == weight_bytes(cfg, "bfp8") - (gate_up_tiles + down_tiles) * (1088 - 576))
    # bfp4 everywhere: every matrix tile at 576 bytes against bfp8's 1,088 (vectors stay bf16)
    matrix_tiles = (weight_bytes(cfg, "bf16") - weight_bytes(cfg, "bfp8")) // (2048 - 1088)
    assert weight_bytes(cfg, "bfp8") - weight_bytes(cfg, "bfp4") == matrix_tiles * (1088 - 576)


def test_the_device_stack_allocates_what_the_memory_plan_counts():
    """What bfp4 gate/up saves in the tiny model's device stack (each resident tensor's bytes as the simulator
    allocated them) is what weight_bytes says it saves."""
    from ttprefill.model.memory_plan import weight_bytes

    with Engine(TINY, WEIGHTS, backend="sim", options=EngineOptions(weight_format=DEMO_MLP),
                model_key="tiny:random:0") as engine:
        held = engine.mixers.weight_bytes
    with Engine(TINY, WEIGHTS, backend="sim", model_key="tiny:random:0") as engine:
        bfp8_held = engine.mixers.weight_bytes
    assert bfp8_held - held == weight_bytes(TINY, "bfp8") - weight_bytes(TINY, DEMO_MLP) > 0


def main() -> None:
    for name, weight_format, fidelity in CONFIGS:
        for mesh in ((1, 1), (1, 2)):
            row = _errors(weight_format, fidelity, mesh)
            print(f"{name:26s} {mesh[0]}x{mesh[1]} rel RMS {row['rel_rms']:.4f} PCC {row['pcc']:.6f}", flush=True)


if __name__ == "__main__":
    main()
