"""Projection fidelity: the setting (ops/linear/fidelity.py), the simulated matmul's numerics at LoFi against an
independent model of the matrix unit's slices, and the device stack running each projection at its role's
fidelity."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill.device.formats import from_device_bytes, to_device_bytes
from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.ops.linear import linear_host
from ttprefill.ops.linear.fidelity import ROLES, FidelitySpecError, ProjectionFidelity
from ttprefill.options import EngineError, EngineOptions
from ttprefill.reference.metrics import rel_rms


def test_parse_reads_one_fidelity_for_all_or_pairs_over_a_base():
    assert ProjectionFidelity.parse("LoFi") == ProjectionFidelity.uniform(MathFidelity.LoFi)
    base = ProjectionFidelity.uniform(MathFidelity.HiFi4)
    got = ProjectionFidelity.parse("mlp_gate_up=LoFi, gdn_out=HiFi2", base)
    assert got.mlp_gate_up is MathFidelity.LoFi and got.gdn_out is MathFidelity.HiFi2
    assert all(got.of(r) is MathFidelity.HiFi4 for r in ROLES if r not in ("mlp_gate_up", "gdn_out"))
    assert ProjectionFidelity.parse(got.describe()) == got  # describe() reads back
    assert ProjectionFidelity.uniform(MathFidelity.HiFi3).describe() == "HiFi3"


@pytest.mark.parametrize("spec, words", [("", "empty"), ("lofi", "unknown math fidelity 'lofi'"),
                                          ("mlp=LoFi", "role=fidelity"), ("mlp_down=LoFi,mlp_down=HiFi4", "twice"),
                                          ("mlp_down", "unknown math fidelity 'mlp_down'")])
def test_parse_refuses_bad_settings_naming_the_part(spec, words):
    with pytest.raises(FidelitySpecError, match=words):
        ProjectionFidelity.parse(spec)


def test_engine_options_take_only_a_projection_fidelity():
    with pytest.raises(EngineError, match="matmul_fidelity must be a ProjectionFidelity"):
        EngineOptions(matmul_fidelity="LoFi")
    with pytest.raises(FidelitySpecError, match="gdn_in must be a MathFidelity"):
        ProjectionFidelity(gdn_in="HiFi2")
    with pytest.raises(FidelitySpecError, match="unknown projection role"):
        ProjectionFidelity().of("mixer")


def _truncate(x: np.ndarray, mask: int) -> np.ndarray:
    """Keep the sign, exponent and the mantissa bits `mask` keeps (fp32 bit pattern), dropping the rest."""
    return (np.asarray(x, np.float32).view(np.uint32) & np.uint32(mask)).view(np.float32).astype(np.float64)


# The matrix unit's one-pass slices (tt-isa-documentation WormholeB0 SrcASrcB / MVMUL, fidelity phases): srcB,
# which takes in0 (the activation), multiplies with sign, exponent, hidden bit and 6 mantissa bits; srcA, which
# takes in1 (the weight), with 4.
ACTIVATION_HI, WEIGHT_HI = 0xFFFE0000, 0xFFF80000


def test_lofi_multiplies_the_operands_high_slices_and_hifi4_all_of_them():
    from ttprefill.device.sim_device import SimDevice

    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 1024)).astype(np.float32)
    w = (rng.standard_normal((64, 1024)) * 0.02).astype(np.float32)
    xq = from_device_bytes(to_device_bytes(x, DataFormat.Float16_b), DataFormat.Float16_b, x.shape)
    w_held = from_device_bytes(to_device_bytes(np.ascontiguousarray(w.T), DataFormat.Bfp8_b), DataFormat.Bfp8_b,
                               (1024, 64)).T
    exact = xq.astype(np.float64) @ w_held.T.astype(np.float64)
    one_pass = _truncate(xq, ACTIVATION_HI) @ _truncate(w_held, WEIGHT_HI).T
    device = SimDevice()
    lofi = linear_host(device, x, w, weight_format=DataFormat.Bfp8_b, fidelity=MathFidelity.LoFi)
    hifi4 = linear_host(device, x, w, weight_format=DataFormat.Bfp8_b, fidelity=MathFidelity.HiFi4)
    # What is left besides the slices: bf16 partials between K blocks and the bf16 output (the same in both).
    assert rel_rms(one_pass, lofi) < 0.01 < rel_rms(exact, lofi)
    assert rel_rms(exact, hifi4) < 0.01 < rel_rms(one_pass, hifi4)
    # Truncation shrinks every weight magnitude, so LoFi's products are biased toward zero: the output's
    # scale drops by the mean truncation, which no rounding of the other steps does.
    assert np.sum(lofi * exact) / np.sum(exact * exact) < np.sum(hifi4 * exact) / np.sum(exact * exact)


def test_lofi_loses_nothing_on_operands_its_slices_hold():
    from ttprefill.device.sim_device import SimDevice

    rng = np.random.default_rng(4)
    # bfp4 weights carry at most 3 significant bits, activations rounded to 7: both fit the one-pass slices
    x = _truncate(rng.standard_normal((32, 512)), ACTIVATION_HI).astype(np.float32)
    w = (rng.standard_normal((32, 512)) * 0.02).astype(np.float32)
    device = SimDevice()
    lofi = linear_host(device, x, w, weight_format=DataFormat.Bfp4_b, fidelity=MathFidelity.LoFi)
    hifi4 = linear_host(device, x, w, weight_format=DataFormat.Bfp4_b, fidelity=MathFidelity.HiFi4)
    np.testing.assert_array_equal(lofi, hifi4)


def test_the_device_stack_runs_every_projection_at_its_roles_fidelity(monkeypatch):
    import ttprefill.ops.linear as linear_module
    from ttprefill.engine import Engine
    from ttprefill.model.config import get_preset
    from ttprefill.model.weights import random_weights

    import ttprefill.ops.linear.swiglu as swiglu_module

    calls = []

    def spying(original):
        def spy(device, x, weight, *args, **kwargs):
            calls.append((id(weight), kwargs.get("fidelity")))
            return original(device, x, weight, *args, **kwargs)
        return spy

    monkeypatch.setattr(linear_module, "linear", spying(linear_module.linear))
    # the MLP's gate | up projection with its SwiGLU
    monkeypatch.setattr(swiglu_module, "linear_swiglu", spying(swiglu_module.linear_swiglu))
    config = get_preset("tiny")
    chosen = ProjectionFidelity(mlp_gate_up=MathFidelity.LoFi, mlp_down=MathFidelity.HiFi3,
                                gdn_in=MathFidelity.HiFi4, gdn_out=MathFidelity.LoFi,
                                attention_in=MathFidelity.HiFi3, attention_out=MathFidelity.HiFi4,
                                lm_head=MathFidelity.LoFi)
    engine = Engine(config, random_weights(config, seed=1), backend="sim",
                    options=EngineOptions(chunk_tokens=64, matmul_fidelity=chosen))
    engine.prefill(list(range(40)))
    stack = engine.mixers
    want = {}
    for lw in stack.layers:
        want.update({id(lw.gate_up): "mlp_gate_up", id(lw.down_proj): "mlp_down"})
        m = lw.mixer
        if hasattr(m, "in_qkv"):
            want.update({id(w): "gdn_in" for w in (m.in_qkv, m.in_zba)})
            want[id(m.out_proj)] = "gdn_out"
        else:
            want.update({id(m.qkv): "attention_in", id(m.o_proj): "attention_out"})
    want.update({id(c): "lm_head" for c in stack.lm_head.chunks})
    assert {want[w] for w, _ in calls} == set(ROLES)  # every role ran, and only the stack's weights
    assert all(fid is chosen.of(want[w]) for w, fid in calls)



def test_bench_ttft_times_the_projections_at_the_setting_asked_for():
    from ttprefill import bench

    def run(spec):
        args = bench.TtftBenchArgs(model="tiny", seq=128, matmul_fidelity=spec,
                                   device=bench.DeviceChoice(timing_only=True))
        return bench.run("ttft", args)

    hifi4, lofi = run("HiFi4"), run("LoFi")
    assert (hifi4["matmul_fidelity"], lofi["matmul_fidelity"]) == ("HiFi4", "LoFi")
    # a quarter of the matrix unit's passes: the projections take less modeled time, nothing else changes
    assert lofi["by_op"]["matmul"] < hifi4["by_op"]["matmul"]
    assert all(lofi["by_op"][k] == hifi4["by_op"][k] for k in ("attention", "gdn", "norms", "rest"))
    default = run(None)
    assert default["matmul_fidelity"] == EngineOptions().matmul_fidelity.describe()
    with pytest.raises(FidelitySpecError, match="role=fidelity"):
        run("mlp=LoFi")
