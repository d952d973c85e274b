"""flash_attention: the causal flash-attention prefill kernels on the simulator against the fp64 reference.

Inputs are bf16 values (the kernels' I/O format). The reference (ttprefill.reference.attention) sees
the same values; with bfp8_b pages it sees K/V as the pages hold them, rounded by the host-side bfp8
encoder (ttprefill.device.formats, checked bit for bit against the C++ packer in test_formats.py),
and the error from that storage rounding is bounded separately.
"""

from __future__ import annotations


import numpy as np
import pytest

from ttprefill.device.formats import from_device_bytes, round_to_bf16, to_device_bytes
from ttprefill.device.program import DataFormat, L1OverflowError, MathFidelity
from ttprefill.device.sim_device import SimDevice
from ttprefill.ops import attention as fa
from ttprefill.bench import AttentionBenchArgs, DeviceChoice
from ttprefill.bench.attention import attention_bench
from ttprefill.ops.attention import (
    CacheCapacityError,
    FlashAttentionConfig,
    HeadCountError,
    HeadDimError,
    KVCache,
    L1BudgetError,
    PageTableError,
    ShapeError,
    flash_attention,
)
from ttprefill.hw import L1_CB_BUDGET_BYTES
from ttprefill.reference.attention import causal_attention
from ttprefill.reference.metrics import pcc, rel_rms

BF16, BFP8 = DataFormat.Float16_b, DataFormat.Bfp8_b
PCC_MIN, REL_RMS_MAX = 0.999, 0.01


@pytest.fixture(scope="module")
def device():
    return SimDevice()


def bf16_normal(rng, shape):
    return round_to_bf16(rng.standard_normal(shape).astype(np.float32))


def as_stored(x: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """x [S, H, D] as cache pages of format fmt hold it."""
    s, h, d = x.shape
    t = x.transpose(1, 0, 2)
    return from_device_bytes(to_device_bytes(t, fmt), fmt, t.shape).transpose(1, 0, 2)


def make_inputs(seed, sq, p0, hq, hkv, d, gated=False):
    rng = np.random.default_rng(seed)
    q = bf16_normal(rng, (sq, hq, d))
    k = bf16_normal(rng, (p0 + sq, hkv, d))
    v = bf16_normal(rng, (p0 + sq, hkv, d))
    gate = bf16_normal(rng, (sq, hq, d)) if gated else None
    return q, k, v, gate


def shuffled_table(seed, blocks, spare=3):
    """A page table whose pages are out of order and not the first ids of the pool."""
    rng = np.random.default_rng(seed)
    return [int(p) for p in rng.permutation(blocks + spare)[:blocks]], blocks + spare


def prefill_prefix(device, cache, table, k, v, p0):
    """Put the prefix's K/V into the cache the way an earlier chunk would have."""
    if p0:
        fa.write_kv_cache(device, cache, k[:p0], v[:p0], table, 0)


# Sq, p0, Hq, Hkv, head_dim, page format, gated, shuffled table, fidelity
SHAPES = [
    (1, 0, 1, 1, 64, BF16, False, False, MathFidelity.HiFi2),
    (31, 0, 1, 1, 64, BF16, False, True, MathFidelity.HiFi2),
    (32, 64, 1, 1, 128, BF16, False, True, MathFidelity.HiFi2),
    (100, 1000, 8, 2, 128, BFP8, False, True, MathFidelity.HiFi2),
    (31, 64, 24, 4, 256, BF16, True, True, MathFidelity.HiFi2),
    (512, 1000, 6, 1, 64, BF16, True, True, MathFidelity.HiFi2),
    (100, 64, 6, 1, 256, BFP8, False, False, MathFidelity.HiFi2),
    (512, 0, 24, 4, 128, BF16, False, True, MathFidelity.HiFi2),
    (2048, 0, 8, 2, 64, BF16, False, True, MathFidelity.HiFi2),
    (1, 1000, 24, 4, 256, BFP8, False, True, MathFidelity.HiFi2),
    (100, 1000, 1, 1, 128, BF16, False, True, MathFidelity.HiFi4),
]


@pytest.mark.parametrize("sq,p0,hq,hkv,d,fmt,gated,shuffle,fidelity", SHAPES,
                         ids=[f"sq{s[0]}-p0{s[1]}-h{s[2]}x{s[3]}-d{s[4]}-{s[5].name}{'-gate' if s[6] else ''}"
                              f"{'-shuffled' if s[7] else ''}-{s[8].name}" for s in SHAPES])
def test_flash_attention_matches_fp64_reference(device, sq, p0, hq, hkv, d, fmt, gated, shuffle, fidelity):
    q, k, v, gate = make_inputs(sq + p0 + d, sq, p0, hq, hkv, d, gated)
    page_tokens = 64
    blocks = -(-(p0 + sq) // page_tokens)
    table, pages = shuffled_table(sq, blocks) if shuffle else (list(range(blocks)), blocks)
    cache = KVCache.create(device, pages, page_tokens, hkv, d, fmt)
    try:
        prefill_prefix(device, cache, table, k, v, p0)
        config = FlashAttentionConfig(math_fidelity=fidelity)
        out = flash_attention(device, q, k[p0:], v[p0:], cache, table, p0, gate=gate, config=config)
    finally:
        cache.free()
    assert out.shape == q.shape
    ref = causal_attention(q, as_stored(k, fmt), as_stored(v, fmt), p0, gate=gate)
    assert pcc(ref, out) >= PCC_MIN
    assert rel_rms(ref, out) <= REL_RMS_MAX
    if fmt == BFP8:  # and what storing K/V in bfp8_b costs against the unrounded inputs
        ref_exact = causal_attention(q, k, v, p0, gate=gate)
        assert pcc(ref_exact, out) >= PCC_MIN
        assert rel_rms(ref_exact, out) <= 2 * REL_RMS_MAX


def test_flash_attention_chunked_equals_one_shot(device):
    """4096 tokens prefilled in chunks of 512 through the cache give the one-shot output."""
    seq, chunk, hq, hkv, d = 4096, 512, 1, 1, 64
    q, k, v, _ = make_inputs(7, seq, 0, hq, hkv, d)
    table, pages = shuffled_table(5, seq // 64)
    outputs = {}
    for name, step in (("one_shot", seq), ("chunked", chunk)):
        cache = KVCache.create(device, pages, 64, hkv, d, BF16)
        try:
            parts = [flash_attention(device, q[a:a + step], k[a:a + step], v[a:a + step], cache, table, a)
                     for a in range(0, seq, step)]
        finally:
            cache.free()
        outputs[name] = np.concatenate(parts)
    ref = causal_attention(q, k, v, 0)
    for out in outputs.values():
        assert rel_rms(ref, out) <= REL_RMS_MAX and pcc(ref, out) >= PCC_MIN
    assert pcc(outputs["one_shot"], outputs["chunked"]) >= PCC_MIN
    assert rel_rms(outputs["one_shot"], outputs["chunked"]) <= REL_RMS_MAX


_TF32_COPIES = ("scores (cb_s) and the running output (cb_o) are both copied into DST and read by FPU ops, so "
    "they cannot be in UnpackToDestFp32 mode: their copies pass through srcA as TF32, as on the card, "
    "and scores ~200 nats past the running max lose enough (rel RMS ~2.7e-2) to fail; exact copies "
    "need copy-only fp32 CBs in kernels/flash_attention/compute.cpp")


@pytest.mark.xfail(strict=True, reason=_TF32_COPIES)
def test_flash_attention_rescales_when_scores_outgrow_the_running_max(device):
    """Keys whose scores climb by tens of nats per key block force the rescaling path (the fast path's
    overflow guard rejects those blocks); a guard of 0 nats forces it on every block."""
    sq, p0, hq, hkv, d = 300, 700, 4, 2, 64
    rng = np.random.default_rng(11)
    direction = rng.standard_normal(d).astype(np.float32)
    direction /= np.linalg.norm(direction)
    q = round_to_bf16(8 * direction + 0.5 * rng.standard_normal((sq, hq, d)).astype(np.float32))
    growth = np.linspace(0, 40, p0 + sq, dtype=np.float32)[:, None, None]  # score +~40 nats over the context
    k = round_to_bf16(growth * direction + rng.standard_normal((p0 + sq, hkv, d)).astype(np.float32))
    v = bf16_normal(rng, (p0 + sq, hkv, d))
    ref = causal_attention(q, k, v, p0)
    table = list(range(-(-(p0 + sq) // 64)))
    # Default plan (one row group per unit), then 4 rows per unit (two row groups, pipelined) with wide
    # key blocks (the next row group's scores interleaved with P V) and narrow ones (formed ahead).
    layouts = [{}, dict(k_block_tiles=16, q_block_tiles=2, heads_per_unit=2),
               dict(k_block_tiles=8, q_block_tiles=2, heads_per_unit=2)]
    for nats in (20.0, 0.0):
        for layout in layouts if nats == 0.0 else layouts[:1]:
            cache = KVCache.create(device, len(table), 64, hkv, d, BF16)
            try:
                prefill_prefix(device, cache, table, k, v, p0)
                out = flash_attention(device, q, k[p0:], v[p0:], cache, table, p0,
                                      config=FlashAttentionConfig(lazy_rescale_nats=nats, **layout))
            finally:
                cache.free()
            assert pcc(ref, out) >= PCC_MIN and rel_rms(ref, out) <= REL_RMS_MAX, (nats, layout)


@pytest.mark.xfail(strict=True, reason=_TF32_COPIES)
def test_flash_attention_guard_catches_scores_that_would_overflow(device):
    """Scores that climb ~200 nats over the context: exp against a stale running max overflows fp32
    (past ~88 nats), so the output is finite and accurate only if the fast path's overflow guard reads
    the block sums correctly and sends those blocks to the rescaling path."""
    sq, p0, hq, hkv, d = 300, 700, 4, 2, 64
    rng = np.random.default_rng(12)
    direction = rng.standard_normal(d).astype(np.float32)
    direction /= np.linalg.norm(direction)
    q = round_to_bf16(8 * direction + 0.5 * rng.standard_normal((sq, hq, d)).astype(np.float32))
    growth = np.linspace(0, 200, p0 + sq, dtype=np.float32)[:, None, None]
    k = round_to_bf16(growth * direction + rng.standard_normal((p0 + sq, hkv, d)).astype(np.float32))
    v = bf16_normal(rng, (p0 + sq, hkv, d))
    ref = causal_attention(q, k, v, p0)
    table = list(range(-(-(p0 + sq) // 64)))
    for layout in ({}, dict(k_block_tiles=16, q_block_tiles=2, heads_per_unit=2)):
        cache = KVCache.create(device, len(table), 64, hkv, d, BF16)
        try:
            prefill_prefix(device, cache, table, k, v, p0)
            out = flash_attention(device, q, k[p0:], v[p0:], cache, table, p0, config=FlashAttentionConfig(**layout))
        finally:
            cache.free()
        assert np.isfinite(out).all(), layout
        assert pcc(ref, out) >= PCC_MIN and rel_rms(ref, out) <= REL_RMS_MAX, layout


@pytest.mark.parametrize("fmt", [BF16, BFP8])
def test_kv_cache_write_keeps_prefix_rows_of_ragged_chunks(device, fmt):
    """Chunks that start inside a 32-token tile leave the cached rows before them untouched."""
    hq, hkv, d = 2, 2, 64
    q, k, v, _ = make_inputs(3, 170, 0, hq, hkv, d)
    table = [3, 0, 4]
    cache = KVCache.create(device, 5, 64, hkv, d, fmt)
    try:
        for a, b in ((0, 45), (45, 90), (90, 101), (101, 170)):
            flash_attention(device, q[a:b], k[a:b], v[a:b], cache, table, a)
        k_cached, v_cached = cache.read(table, 170)
    finally:
        cache.free()
    np.testing.assert_array_equal(k_cached, as_stored(k, fmt))
    np.testing.assert_array_equal(v_cached, as_stored(v, fmt))


# ------------------------------------------------------------------------------------------ errors


def _cache(device, pages=4, hkv=2, d=64, page_tokens=64):
    return KVCache.create(device, pages, page_tokens, hkv, d, BF16)


def _call(device, cache, *, sq=8, hq=4, hkv=2, d=64, p0=0, table=(0, 1), gate_shape=None, k_tokens=None, **kw):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((sq, hq, d)).astype(np.float32)
    k = rng.standard_normal((k_tokens or sq, hkv, d)).astype(np.float32)
    gate = np.zeros(gate_shape, np.float32) if gate_shape else None
    return flash_attention(device, q, k, k, cache, list(table), p0, gate=gate, **kw)


@pytest.mark.parametrize("kwargs,error,words", [
    (dict(hq=6, hkv=4), HeadCountError, "multiple of kv heads"),
    (dict(d=96), HeadDimError, "head_dim=96"),
    (dict(k_tokens=9), ShapeError, "k_new has 9 tokens"),
    (dict(gate_shape=(8, 4, 32)), ShapeError, "gate"),
    (dict(hkv=1, hq=2), ShapeError, "cache holds 2"),
    (dict(p0=100, table=(0,)), PageTableError, "page table has 1 entries"),
    (dict(p0=64, table=(0, 7)), PageTableError, "page 7 outside the pool"),
    (dict(p0=64, table=(1, 1)), PageTableError, "page 1 for two blocks"),
    (dict(p0=300, table=(0, 1, 2, 3, 4, 5)), CacheCapacityError, "do not fit the K/V cache"),
])
def test_flash_attention_rejects_bad_calls_before_dispatch(kwargs, error, words):
    device = SimDevice()
    cache = _cache(device)
    with pytest.raises(error, match=words) as info:
        _call(device, cache, **kwargs)
    assert isinstance(info.value, ValueError)
    assert device.last_report is None  # nothing ran


def test_flash_attention_names_the_block_size_to_lower_when_l1_is_short():
    config = FlashAttentionConfig(k_block_tiles=64, q_block_tiles=4)
    with pytest.raises(L1BudgetError, match="lower k_block_tiles") as info:
        fa.plan_attention(24, 4, 256, 2048, 0, BF16, config=config)
    assert isinstance(info.value, L1OverflowError)


def test_kv_cache_rejects_pages_that_are_not_whole_tiles():
    with pytest.raises(ShapeError, match="page_tokens=48"):
        KVCache.create(SimDevice(), 4, 48, 1, 64)


# ------------------------------------------------------------------------------------------ plan


@pytest.mark.parametrize("hq,hkv,d,sq,p0", [(24, 4, 256, 8192, 0), (8, 2, 128, 512, 1000), (1, 1, 64, 4096, 0)])
def test_work_split_covers_every_unit_once_and_balances_causal_cost(hq, hkv, d, sq, p0):
    plan = fa.plan_attention(hq, hkv, d, sq, p0, BF16)
    units = [u for core in plan.core_units for u in core]
    expected = {fa.pack_unit(hg, b) for hg, b in plan.units()}
    assert sorted(units) == sorted(expected)
    assert len(plan.core_units) <= 64
    cost = {fa.pack_unit(hg, b): plan.rows * plan.unit_key_tiles(b) for hg, b in plan.units()}
    loads = [sum(cost[u] for u in core) for core in plan.core_units]
    assert max(loads) <= max(max(cost.values()), 1.15 * sum(loads) / len(loads))
    if len(units) >= 2 * len(plan.core_units):  # several units per core: early and late query blocks mix
        blocks = [[u & 0xFFFF for u in core] for core in plan.core_units]
        assert all(min(b) < plan.q_blocks / 2 <= max(b) for b in blocks if len(b) >= 2)
    assert plan.l1_bytes(1) <= L1_CB_BUDGET_BYTES


def test_registered_programs_build_without_a_device():
    import ttprefill.ops.attention.registered  # noqa: F401  (its @register lines)
    from ttprefill.ops.registry import TEST_PROGRAMS

    names = [n for n in TEST_PROGRAMS if n.startswith("flash_attention/")]
    assert len(names) >= 3
    for name in names:
        program = TEST_PROGRAMS[name]()
        program.validate()
        assert program.kernels and program.circular_buffers


def test_attention_bench_reports_accuracy_and_modeled_figures():
    args = AttentionBenchArgs(seq=256, q_heads=2, kv_heads=1, head_dim=64, chunk=128, prefix=64)
    result = attention_bench(args)
    for key in ("wall_s", "modeled_cycles", "modeled_s", "tflops", "fpu_util", "dram_util", "pcc", "rel_rms",
                "shape"):
        assert key in result
    assert result["pcc"] >= PCC_MIN and result["rel_rms"] <= REL_RMS_MAX
    assert 0 < result["fpu_util"] < 1 and result["modeled_cycles"] > 0
    # As the CLI builds them: unset flags are None; timing only, no accuracy keys.
    cli = AttentionBenchArgs(seq=512, q_heads=2, kv_heads=1, head_dim=128, chunk=None, prefix=0, fidelity=None,
                             format="bfp8", check="no", device=DeviceChoice(timing_only=True))
    timed = attention_bench(cli)
    assert "pcc" not in timed and timed["modeled_cycles"] > 0 and timed["shape"]["format"] == "Bfp8_b"


@pytest.mark.parametrize("seq,hq,d,floor", [(2048, 16, 128, 0.27), (2048, 24, 256, 0.34), (8192, 16, 128, 0.43)])
def test_modeled_fpu_utilisation_does_not_regress(seq, hq, d, floor):
    """Regression guard on the modeled figure (timing model 2.3 at its central setting; bf16 pages, HiFi2,
    64 cores, timing only): GQA prefill a few % under what the kernel reaches (2k: 0.282 for d128, 0.355 for
    d256; 8k d128: 0.444, as under 2.2). Model 2.1 gave 0.297 / 0.423 / 0.534 (it let the unpacker reuse both matmul
    operands across a block and move 80 B/cycle); model 1 0.33 / 0.49 / 0.69."""
    args = AttentionBenchArgs(seq=seq, q_heads=hq, kv_heads=4, head_dim=d, check="no",
                              device=DeviceChoice(timing_only=True))
    assert attention_bench(args)["fpu_util"] >= floor


# ------------------------------------------------------------------------------------------ K/V sharing

# Sq, p0, Hq, Hkv, head_dim, page format, gated, cores per sharing group
SHARED = [
    (512, 1000, 8, 2, 128, BF16, False, 4),
    (256, 64, 4, 1, 256, BFP8, True, 8),
    (200, 0, 6, 1, 64, BF16, False, 2),
]


@pytest.mark.parametrize("sq,p0,hq,hkv,d,fmt,gated,share", SHARED,
                         ids=[f"sq{s[0]}-p0{s[1]}-h{s[2]}x{s[3]}-d{s[4]}-{s[5].name}-share{s[7]}" for s in SHARED])
def test_shared_kv_reads_match_fp64_reference(device, sq, p0, hq, hkv, d, fmt, gated, share):
    """Groups of cores that read each K/V block once (the first multicasts it) give the reference's answer,
    causal chunks included, where a group streams keys past some of its units' last query (dropped)."""
    q, k, v, gate = make_inputs(sq + p0 + share, sq, p0, hq, hkv, d, gated)
    page_tokens = 64
    blocks = -(-(p0 + sq) // page_tokens)
    table, pages = shuffled_table(sq + 1, blocks)
    config = FlashAttentionConfig(kv_share_cores=share)
    plan = fa.plan_attention(hq, hkv, d, sq, p0, fmt, gated, config, pages)
    assert plan.kv_share == share
    cache = KVCache.create(device, pages, page_tokens, hkv, d, fmt)
    try:
        prefill_prefix(device, cache, table, k, v, p0)
        out = flash_attention(device, q, k[p0:], v[p0:], cache, table, p0, gate=gate, config=config)
    finally:
        cache.free()
    ref = causal_attention(q, as_stored(k, fmt), as_stored(v, fmt), p0, gate=gate)
    assert pcc(ref, out) >= PCC_MIN and rel_rms(ref, out) <= REL_RMS_MAX


@pytest.mark.parametrize("hq,hkv,d,sq,p0,share", [(8, 2, 256, 2048, 30720, 8), (24, 4, 128, 4096, 0, 4),
                                                  (8, 2, 256, 2048, 0, 2)])
def test_shared_split_groups_units_of_one_kv_head(hq, hkv, d, sq, p0, share):
    plan = fa.plan_attention(hq, hkv, d, sq, p0, BF16, config=FlashAttentionConfig(kv_share_cores=share))
    units = [u for core in plan.core_units for u in core]
    assert sorted(units) == sorted(fa.pack_unit(hg, b) for hg, b in plan.units())
    heads_per_kv = plan.group // plan.hpu
    for first in range(0, len(plan.core_units), share):
        group = plan.core_units[first:first + share]
        streamed = plan.core_streamed[first:first + share]
        assert len(group) == share and {len(c) for c in group} == {len(group[0])}
        assert all(c // 8 == first // 8 for c in range(first, first + share))  # one grid row
        for n in range(len(group[0])):  # round n: one kv head, one streamed length covering every unit
            assert len({(c[n] >> 16) // heads_per_kv for c in group}) == 1
            assert len({s[n] for s in streamed}) == 1
            assert streamed[0][n] == max(plan.unit_key_tiles(c[n] & 0xFFFF) for c in group)


def test_some_shared_case_streams_keys_past_a_units_own():
    """The numeric cases above include a group whose reads run past some unit's last key (dropped by compute)."""
    def drops(sq, p0, hq, hkv, d, fmt, gated, share):
        plan = fa.plan_attention(hq, hkv, d, sq, p0, fmt, gated, FlashAttentionConfig(kv_share_cores=share))
        return any(s > plan.unit_key_tiles(u & 0xFFFF)
                   for units, streamed in zip(plan.core_units, plan.core_streamed) for u, s in zip(units, streamed))
    assert any(drops(*case) for case in SHARED)


def test_kv_share_that_cannot_be_arranged_is_refused():
    with pytest.raises(fa.FlashAttentionError, match="kv_share_cores=3"):
        fa.plan_attention(8, 2, 128, 512, 0, BF16, config=FlashAttentionConfig(kv_share_cores=3))
    with pytest.raises(fa.FlashAttentionError, match="cannot be arranged"):  # one kv head's 1 unit: no group of 8
        fa.plan_attention(1, 1, 64, 32, 0, BF16, config=FlashAttentionConfig(kv_share_cores=8))
