"""tt-metal's softmax kernels (Metal 2.0, unmodified) on the simulator against torch.softmax in fp64, and
the mirror (ttprefill/ops/upstream/normalization.py) against the kernel sources: every name the kernels
bind (args::, dfb::, tensor::) under the spec's defines is supplied, and the factory's block and split
rules."""

from __future__ import annotations

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
def test_upstream_softmax_matches_torch(name, sim):
    outcome = registry.run_program(name, sim)
    assert outcome.passed, outcome.error
