"""The SDPA mirror (ttprefill/ops/upstream/sdpa.py) against tt-metal's kernel sources and the factory's
rules (argument layouts, CB ids, the global Q split, subblocks), and tt-metal's unmodified sdpa kernels
run on the simulator against ttprefill.reference.attention (fp64), PCC >= 0.999 and rel-RMS <= 0.02:
causal, GQA, batch 2, chunks of 32 to 128 tokens (equal and unequal Q / K chunks), d64 / d128 / d256,
a partial last tile, the accurate exp and 32-bit DST (the registry entries sdpa/*)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kernel_text import accessor_count, accessor_start, compile_time_slots, offset_block_length, source
from ttprefill.device.offline_device import OfflineDevice
from ttprefill.device.program import Role
from ttprefill.ops.upstream import registry, sdpa

SHAPES = [sdpa.SdpaShape(1, 4, 2, 64, 128), sdpa.SdpaShape(2, 2, 1, 128, 96, 64, 64),
          sdpa.SdpaShape(1, 32, 8, 128, 4096, 128, 128), sdpa.SdpaShape(1, 16, 2, 256, 1000)]


def ids(s):
    return f"b{s.batch}_q{s.q_heads}_kv{s.kv_heads}_d{s.head_dim}_s{s.seq}_c{s.q_chunk}"


def build(s):
    program, t = sdpa.sdpa_program(OfflineDevice(), s)
    program.validate()
    return program, t, {k.role: k for k in program.kernels}


@pytest.mark.parametrize("s", SHAPES, ids=ids)
def test_compile_time_args_fill_the_fixed_slots_accessors_and_cb_block(s):
    _, _, k = build(s)
    for role, path in ((Role.RISCV_1, sdpa.READER), (Role.RISCV_0, sdpa.WRITER)):
        text = source(path)
        start = accessor_start(text)
        assert max(compile_time_slots(text)) == start - 1
        assert len(k[role].compile_time_args) == start + 2 * accessor_count(text) + offset_block_length(text)
    text = source(sdpa.COMPUTE)
    fixed = int(re.search(r"cb_arg_offset = (\d+)", text).group(1))
    assert max(compile_time_slots(text)) == fixed - 1
    assert len(k[Role.COMPUTE].compile_time_args) == fixed + offset_block_length(text)


@pytest.mark.parametrize("s", SHAPES, ids=ids)
def test_every_cb_id_passed_is_a_configured_buffer(s):
    program, _, k = build(s)
    configured = {cb.index for cb in program.circular_buffers}
    reader_text = source(sdpa.READER)
    block = offset_block_length(reader_text)
    reader_ids = k[Role.RISCV_1].compile_time_args[-block:]
    # q, k, v and mask are read; the rest (sink, page table, chunk start, windowing, chains) stay untouched.
    assert set(reader_ids[:4]) <= configured
    compute_ids = k[Role.COMPUTE].compile_time_args[-offset_block_length(source(sdpa.COMPUTE)):]
    touched = compute_ids[:4] + compute_ids[5:7] + compute_ids[9:18]
    assert set(touched) <= configured


@pytest.mark.parametrize("s", SHAPES, ids=ids)
def test_global_q_ranges_cover_every_head_and_chunk_once(s):
    _, _, k = build(s)
    p = sdpa.plan(s)
    total = s.batch * s.q_heads * p.q_num_chunks
    covered = []
    for core, args in k[Role.COMPUTE].runtime_args.items():
        start, count = args[4], args[5]
        assert k[Role.RISCV_1].runtime_args[core][-2:] == [start, count]
        assert k[Role.RISCV_0].runtime_args[core][7:9] == [start, count]
        covered += range(start, start + count)
    assert sorted(covered) == list(range(total))
    counts = [a[5] for a in k[Role.COMPUTE].runtime_args.values()]
    assert max(counts) - min(counts) <= 1


def test_subblocks_and_granularities_follow_the_factorys_rules():
    # Q and K chunks of 4 tiles, d128, 8 DST tiles: QK^T block 4x4 takes the first fitting (2, 4); the
    # output block 4x4 likewise; granularities are the largest divisors within DST (half DST for reduce).
    p = sdpa.plan(sdpa.SdpaShape(1, 2, 1, 128, 512, 128, 128))
    assert p.qk_subblock == (2, 4) and p.out_subblock == (2, 4)
    assert p.granularity == {"STATS_GRANULARITY": 4, "SUB_EXP_GRANULARITY": 4, "MUL_BCAST_GRANULARITY": 8,
                             "DHT_GRANULARITY": 4, "REDUCE_GRANULARITY": 4}
    # One-tile chunks, d64: a 1x1 QK block, a 1x2 output block.
    p = sdpa.plan(sdpa.SdpaShape(1, 2, 1, 64, 64))
    assert p.qk_subblock == (1, 1) and p.out_subblock == (1, 2)


def test_scale_is_passed_as_fp32_bits_of_one_over_sqrt_d():
    _, _, k = build(SHAPES[0])
    assert k[Role.COMPUTE].compile_time_args[21] == 0x3E000000  # 1/sqrt(64) = 0.125


NULL_ACCESSOR_KERNEL = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    constexpr auto present = TensorAccessorArgs<0>();
    constexpr auto absent = TensorAccessorArgs<present.next_compile_time_args_offset()>();
    const auto src = TensorAccessor(present, get_arg_val<uint32_t>(0));
    const auto mask = TensorAccessor(absent, 0);  // declared unconditionally, as sdpa's reader does
    noc_async_read_page(0, src, get_write_ptr(0));
    noc_async_read_barrier();
    if (get_arg_val<uint32_t>(1)) {
        noc_async_read_page(0, mask, get_write_ptr(0));
    }
}
"""


@pytest.mark.parametrize("touch_absent", [False, True])
def test_absent_tensor_accessor_args_compile_and_fail_only_when_read(sim, tmp_path, touch_absent):
    # sdpa passes TensorAccessorArgs(nullptr) (config word 0) for its absent mask, page table, sink, ...
    from ttprefill.device.program import CircularBuffer, CoreRangeSet, DataFormat, Kernel, Program
    from ttprefill.device.sim_device import SimError

    source = tmp_path / "null_accessor.cpp"
    source.write_text(NULL_ACCESSOR_KERNEL)
    x = sim.allocate((32, 32), DataFormat.Float16_b)
    cores = CoreRangeSet.of([(0, 0)])
    kernel = Kernel(source, Role.RISCV_0, cores, x.accessor_args() + sdpa.NULL_ACCESSOR)
    kernel.runtime_args[cores.cores()[0]] = [x.address, int(touch_absent)]
    program = Program([kernel], [CircularBuffer(0, DataFormat.Float16_b, 2048, 1, cores)])
    try:
        if touch_absent:
            with pytest.raises(SimError, match="absent tensor"):
                sim.run(program)
        else:
            sim.run(program)
    finally:
        sim.free(x)


def test_bfp4_b_tiles_as_the_causal_mask_writer_lays_them_out():
    # sdpa's generated (non-lightweight) mask CB is Bfp4_b, and its neginf tile fill writes that layout
    # for a Bfp4_b CB: 64 shared-exponent bytes (one per face row), then one nibble per value (sign, 3-bit
    # magnitude without hidden bit), value 2k in the low nibble of byte k; exponent 0xFF with nibble 0xC is
    # -inf and 0 an open position. (The causal programs here use the lightweight bf16 palette.)
    from ttprefill import _sim

    assert _sim.tile_bytes(7) == 576
    mask = bytearray([0xFF] * 64 + [0] * 512)
    mask[64] = 0xC0  # row 0: column 0 open, column 1 masked
    values = np.asarray(_sim.unpack_tile(7, bytes(mask)))
    assert values[0] == 0 and values[1] == -np.inf and not values[2:].any()
    # 1.5, -0.5, 0.25 share exponent 127: magnitudes 6, 2 (negative), 1 in units of 2**-2.
    x = np.zeros(1024, np.float32)
    x[:3] = [1.5, -0.5, 0.25]
    packed = bytes(_sim.pack_tile(7, x))
    assert packed[0] == 127 and packed[64] == 0xA6 and packed[65] == 0x01
    np.testing.assert_array_equal(np.asarray(_sim.unpack_tile(7, packed))[:4], [1.5, -0.5, 0.25, 0])


# ----------------------------------------------------------------------------- conformance on the simulator
CONFORMANCE = sorted(n for n in registry.discover() if n.startswith("sdpa/"))


def test_every_conformance_shape_is_registered():
    assert CONFORMANCE == sorted(sdpa.CONFORMANCE_SHAPES)
    assert {s.head_dim for s in sdpa.CONFORMANCE_SHAPES.values()} >= {64, 128, 256}
    assert len({(s.q_chunk, s.k_chunk) for s in sdpa.CONFORMANCE_SHAPES.values()}) >= 4


@pytest.mark.parametrize("name", CONFORMANCE)
def test_tt_metal_sdpa_matches_the_fp64_reference(name):
    # a fresh simulator per entry (the registry's default): a check leaves its tensors on the device it ran on
    outcome = registry.run_program(name)
    assert outcome.passed, outcome.error
    assert all(v >= 0.999 for k, v in outcome.metrics.items() if k.endswith("_pcc")), outcome.metrics


def test_timing_only_run_of_a_benchmark_shape():
    """Issue 13 times the program beside our flash attention: it must run without data."""
    from ttprefill.device.sim_device import SimDevice

    device = SimDevice(timing_only=True)
    program, _ = sdpa.sdpa_program(device, sdpa.SdpaShape(1, 8, 2, 128, 1024, 128, 128))
    assert device.run(program).cycles > 0


def test_peer_runs_the_qwen35_demo_config():
    """`bench attention --peer` times tt-metal's sdpa in its Qwen3.5 demo's config (peers.py): chunks of
    128 from 2k tokens on, 64 below, the accurate exp; both fit L1 at Qwen3.5's head dims."""
    from ttprefill import peers

    assert peers.sdpa_peer_chunk(24, 4, 256, 2048) == (128, "qwen36 demo forward_prefill config")
    assert peers.sdpa_peer_chunk(16, 4, 128, 32768)[0] == 128
    assert peers.sdpa_peer_chunk(16, 4, 128, 1024)[0] == 64
    assert peers.SDPA_DEMO_EXP_APPROX is False
