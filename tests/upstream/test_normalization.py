"""tt-metal's softmax kernels (Metal 2.0, unmodified) on the simulator against torch.softmax in fp64, and
the mirror (ttprefill/ops/upstream/normalization.py) against the kernel sources: every name the kernels
bind (args::, dfb::, tensor::) under the spec's defines is supplied, and the factory's block and split
rules."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_text import names, source
from ttprefill.ops.upstream import normalization as nm
from ttprefill.ops.upstream import registry

SHAPES = [nm.SoftmaxShape(64, 256), nm.SoftmaxShape(96, 200), nm.SoftmaxShape(4096, 1024, fp32_dest_acc=True),
          nm.SoftmaxShape(32, 96, numeric_stable=False)]


@pytest.mark.parametrize("s", SHAPES, ids=lambda s: f"r{s.rows}_w{s.width}_fp32{int(s.fp32_dest_acc)}_st{int(s.numeric_stable)}")
def test_every_name_the_kernels_bind_is_supplied(s):
    spec = nm.softmax_spec(s)
    buffers = {d.name for d in spec.dfbs}
    for k in spec.kernels:
        text = source(k.source, set(k.defines))
        assert names(text, "dfb") <= set(k.dfbs) <= buffers, k.source
        assert names(text, "tensor") == set(k.tensors), k.source
        for core, rt in k.runtime_args.items():
            assert names(text, "args") == set(rt) | set(k.compile_time_args), k.source


def test_block_size_prefers_a_divisor_only_when_it_costs_no_extra_blocks():
    assert nm.block_size(16, False) == 8
    assert nm.block_size(12, False) == 6  # two blocks either way
    assert nm.block_size(9, False) == 8  # a divisor (3) would take three blocks, not two
    assert nm.block_size(6, True) == 3


def test_rows_are_split_evenly_larger_shares_first():
    assert nm.split_rows(130) == [3, 3] + [2] * 62
    assert nm.split_rows(5) == [1] * 5
    spec = nm.softmax_spec(nm.SoftmaxShape(32 * 70, 64))
    reader = spec.kernels[0]
    offsets = [a["tile_offset"] for a in reader.runtime_args.values()]
    rows = [a["num_rows"] for a in reader.runtime_args.values()]
    assert offsets == [sum(rows[:i]) * 2 for i in range(len(rows))]



def test_program_binds_each_kernel_to_the_names_it_uses():
    from ttprefill.device.metal2 import names_used
    from ttprefill.device.offline_device import OfflineDevice

    program, tensors = nm.softmax_program(OfflineDevice(), SHAPES[1])
    program.validate()
    configured = {cb.index for cb in program.circular_buffers}
    for k in program.kernels:
        assert k.is_metal2 and set(k.dfb_bindings.values()) <= configured
        # names_used reads the whole source, inactive #ifdef branches (the fused mask path) included:
        # every bound name is used; kernel_text.names, which drops those branches, gives exactly the needed.
        used = names_used(k.source)
        assert set(k.tensor_bindings) <= set(used["tensor"])
        assert set(k.runtime_arg_names) | set(k.named_compile_time_args) <= set(used["args"])
        for args in k.runtime_args.values():
            assert len(args) == len(k.runtime_arg_names)
    assert program.kernels[0].tensor_bindings["src"].address == tensors["src"].address


@pytest.mark.parametrize("name", [n for n in sorted(registry.discover()) if n.startswith("softmax/")])
def test_upstream_softmax_matches_torch(name):
    # a fresh simulator per entry (the registry's default): a check leaves its tensors on the device it ran on
    outcome = registry.run_program(name)
    assert outcome.passed, outcome.error


# ---------------------------------------------------------------------------------------------- layernorm

LN_SHAPES = list(nm.LAYERNORM_SHAPES.values()) + [nm.LayerNormShape(64, 256, gamma=False, beta=False),
                                                  nm.LayerNormShape(64, 256, rms=True, beta=False, gamma=False),
                                                  nm.LayerNormShape(64, 320, beta=False, pre_add=True)]


def _ln_id(s):
    return (f"{'rms' if s.rms else 'ln'}_r{s.rows}_w{s.width}_g{int(s.gamma)}_b{int(s.beta)}"
            f"_pre{int(s.pre_add)}_fp32{int(s.fp32_dest_acc)}")


@pytest.mark.parametrize("s", LN_SHAPES, ids=_ln_id)
def test_layernorm_binds_exactly_the_names_its_kernels_use(s):
    spec = nm.layernorm_spec(s)
    buffers = {d.name for d in spec.dfbs}
    assert len(buffers) == len(spec.dfbs)
    compute = next(k for k in spec.kernels if k.role == "compute")
    assert names(source(compute.source, set(compute.defines)), "dfb") == buffers  # no buffer left unused
    for k in spec.kernels:
        text = source(k.source, set(k.defines))
        assert names(text, "dfb") == set(k.dfbs), k.source
        assert names(text, "tensor") == set(k.tensors), k.source
        for rt in k.runtime_args.values():
            assert names(text, "args") == set(rt) | set(k.compile_time_args), k.source


def test_layernorm_buffers_follow_the_factory():
    # W = 320: Wt = 10 tiles, blocks of 8, so the whole-row buffers round up to 16 pages.
    sizes = {d.name: d.entries for d in nm.layernorm_spec(nm.LayerNormShape(64, 320)).dfbs}
    assert sizes == {"in": 16, "out": 16, "ex": 2, "scaler": 2, "eps": 2, "ex2": 2, "xmm": 16, "xmm2": 16,
                     "ex2pe": 8, "fusion": 16, "gamma": 16, "beta": 16}
    pre = {d.name: d.entries for d in nm.layernorm_spec(nm.LayerNormShape(64, 320, pre_add=True)).dfbs}
    assert (pre["in"], pre["inb"], pre["x"]) == (16, 16, 16)
    fp32 = nm.layernorm_spec(nm.LayerNormShape(64, 320, fp32_dest_acc=True))
    assert {d.name: d.entries for d in fp32.dfbs}["xmm"] == 12  # blocks of 4
    assert {d.name: d.data_format for d in fp32.dfbs}["xmm2"] == nm.F32
    rms = {d.name for d in nm.layernorm_spec(nm.LayerNormShape(64, 256, rms=True, beta=False)).dfbs}
    assert not rms & {"ex", "xmm", "x", "beta"}  # rmsnorm's deviation is written back over its input FIFO


def test_layernorm_rows_and_offsets_per_core():
    spec = nm.layernorm_spec(nm.LayerNormShape(32 * 70, 320))
    reader, writer, compute = spec.kernels
    rows = [a["NCHt"] for a in reader.runtime_args.values()]
    assert rows == nm.split_rows(70) and sum(rows) == 70
    starts = [a["reader_start"] for a in reader.runtime_args.values()]
    assert starts == [sum(rows[:i]) for i in range(len(rows))]
    assert [a["writer_start"] for a in writer.runtime_args.values()] == [r * 10 for r in starts]
    assert [a["NCHt"] for a in compute.runtime_args.values()] == rows
    eps = next(iter(reader.runtime_args.values()))["eps"]
    assert np.uint32(eps).view(np.float32) == np.float32(1e-5)


def test_layernorm_shape_refuses_rms_with_beta():
    with pytest.raises(ValueError, match="beta=False"):
        nm.LayerNormShape(32, 64, rms=True)


def test_layernorm_reference_is_torchs():
    import torch

    rng = np.random.default_rng(0)
    x, b = rng.standard_normal((5, 48)), rng.standard_normal((5, 48))
    g, beta = rng.standard_normal(48), rng.standard_normal(48)
    s = nm.LayerNormShape(5, 48, pre_add=True, eps=1e-3)
    want = torch.nn.functional.layer_norm(torch.from_numpy(x + b), (48,), torch.from_numpy(g), torch.from_numpy(beta),
                                          eps=1e-3).numpy()
    np.testing.assert_allclose(nm.layernorm_reference(s, x, b, g, beta), want, rtol=1e-12, atol=1e-12)
    r = nm.LayerNormShape(5, 48, rms=True, beta=False, eps=1e-3)
    want = torch.nn.functional.rms_norm(torch.from_numpy(x), (48,), torch.from_numpy(g), eps=1e-3).numpy()
    np.testing.assert_allclose(nm.layernorm_reference(r, x, gamma=g), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", [n for n in sorted(registry.discover()) if n.startswith(("layernorm/", "rmsnorm/"))])
def test_upstream_layernorm_and_rmsnorm_match_fp64(name):
    # a fresh simulator per entry (the registry's default): a check leaves its tensors on the device it ran on
    outcome = registry.run_program(name)
    assert outcome.passed, outcome.error
    key = name.split("/")[0]
    assert outcome.metrics[f"{key}_pcc"] >= 0.999
