"""tt-metal's chunk_gated_delta_rule kernels, unmodified, on the simulator: the registry's entries against the
fp64 recurrence (ttprefill.reference.gdn, written from GDN.md), a timing-only run of a benchmark shape, and
the mirror (ttprefill/ops/upstream/gated_delta_rule.py) against the kernel sources: argument layouts, CB
plan, placement and the host-side tensor layout."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kernel_text import accessor_count, accessor_start, compile_time_slots, runtime_slots, source
from ttprefill.device.offline_device import OfflineDevice
from ttprefill.device.program import DataFormat, Role
from ttprefill.ops.upstream import gated_delta_rule as cg
from ttprefill.ops.upstream import registry

SHAPES = [cg.CgdrShape(1, 2, 64, 64, 100, 64), cg.CgdrShape(2, 2, 32, 64, 64, 32, DataFormat.Float16_b),
          cg.CgdrShape(1, 48, 128, 128, 2048, 64)]


def build(s):
    program, t = cg.chunk_gated_delta_rule_program(OfflineDevice(), s)
    program.validate()
    return program, t, {k.role: k for k in program.kernels}


@pytest.mark.parametrize("s", SHAPES, ids=lambda s: f"bh{s.bh}_k{s.key_dim}_t{s.tokens}_c{s.chunk}")
def test_arguments_fill_exactly_the_slots_the_kernels_read(s):
    _, t, k = build(s)
    for role, path in ((Role.RISCV_1, cg.READER), (Role.RISCV_0, cg.WRITER), (Role.COMPUTE, cg.COMPUTE)):
        text = source(path)
        ct = k[role].compile_time_args
        if "TensorAccessorArgs<" in text:
            start = accessor_start(text)
            assert max(compile_time_slots(text)) == start - 1
            assert len(ct) == start + 2 * accessor_count(text)
        else:
            assert len(ct) == max(compile_time_slots(text)) + 1
        assert ct[:3] == [s.ct, s.kt, s.vt]
        for core, args in k[role].runtime_args.items():
            assert len(args) == max(runtime_slots(text)) + 1


def test_reader_addresses_follow_the_accessor_order():
    s = SHAPES[0]
    _, t, k = build(s)
    text = source(cg.READER)
    # The reader names its accessors q_a, k_a, ... and its address args q_addr, k_addr, ... in one order.
    accessors = re.findall(r"constexpr auto (\w+)_a = TensorAccessorArgs", text)
    tensors = {"q": t.q, "k": t.k, "v": t.v, "g": t.g, "b": t.beta, "eye": t.eye, "tril": t.tril, "ones": t.ones,
               "s0": t.s0}
    for h, args in enumerate(k[Role.RISCV_1].runtime_args.values()):
        assert args[:2] == [h, s.num_chunks]
        assert args[2:11] == [tensors[name].address for name in accessors]
        assert args[11:] == [s.heads, s.tokens, 4096, 4096]  # HV, T, fp32 gate tiles


def test_every_circular_buffer_the_compute_names_exists_with_the_io_formats_bf16():
    program, _, _ = build(SHAPES[0])
    named = {int(n) for n in re.findall(r"cb_\w+ = (\d+)", source(cg.COMPUTE))}
    cbs = {cb.index: cb for cb in program.circular_buffers_on(program.all_cores()[0])}
    assert named == set(cbs) == set(range(32))
    bf16 = {i for i, cb in cbs.items() if cb.data_format == DataFormat.Float16_b}
    assert bf16 == {0, 1, 2, 16}  # q, k, v, out: the kernels read these at the bf16 tile size


def test_one_head_per_core_down_the_grid_rows():
    s = cg.CgdrShape(1, 10, 32, 32, 32, 32)
    program, _, _ = build(s)
    cores = [(c.x, c.y) for c in program.kernels[0].runtime_args]
    assert cores == [(0, y) for y in range(8)] + [(1, 0), (1, 1)]


def test_head_major_layout_matches_the_readers_page_arithmetic():
    # The reader takes chunk c of head h at tiles (h * NC + c) * Ct * Kt onward: rows h*L + c*C.. of the
    # [BH, L, K] tensor. Check head_major against a direct construction.
    B, T, H, D, L = 2, 40, 3, 32, 64
    x = np.random.default_rng(0).standard_normal((B, T, H, D)).astype(np.float32)
    hm = cg.head_major(x, B, L)
    for b in range(B):
        for h in range(H):
            np.testing.assert_array_equal(hm[b * H + h, :T], x[b, :, h])
            assert not hm[b * H + h, T:].any()


FENCE_KERNEL = """
#include "api/dataflow/dataflow_api.h"
#include "api/debug/assert.h"
void kernel_main() {
    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
    p[0] = 7;
    invalidate_l1_cache();
    asm volatile("fence");
    ASSERT(p[0] == 7);
}
"""


def test_riscv_fence_and_cache_invalidation_build_and_run(sim, tmp_path):
    # The gate reader (chunk_gdn_gate_read.hpp) settles columns in L1 between invalidate_l1_cache() and a
    # RISC-V `fence`; both must build on the host and leave the kernel's own L1 writes in place.
    from ttprefill.device.program import CircularBuffer, CoreRangeSet, Kernel, Program

    source = tmp_path / "fence.cpp"
    source.write_text(FENCE_KERNEL)
    cores = CoreRangeSet.of([(0, 0)])
    sim.run(Program([Kernel(source, Role.RISCV_0, cores)], [CircularBuffer(0, DataFormat.Float32, 4096, 1, cores)]))


@pytest.mark.parametrize("name", [n for n in sorted(registry.discover()) if n.startswith("chunk_gated_delta_rule/")])
def test_upstream_program_matches_the_fp64_recurrence(name):
    # a fresh simulator per entry (the registry's default): a check leaves its tensors on the device it ran on
    outcome = registry.run_program(name)
    assert outcome.passed, outcome.error


def test_timing_only_run_of_a_benchmark_shape():
    # Issue 13 times this program beside ours: it must run without data (no arithmetic, no uploads).
    from ttprefill.device.sim_device import SimDevice

    device = SimDevice(timing_only=True)
    program, _ = cg.chunk_gated_delta_rule_program(device, cg.CgdrShape(1, 16, 128, 128, 1024, 64))
    assert device.run(program).cycles > 0
