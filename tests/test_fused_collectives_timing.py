"""ttnn's fused matmul + collective ops in the Ethernet model (device/mesh_timing.py, mesh timing 3).

Expected values are derived here from the sources' figures (ttnn 0.81.1's kernels: the reduce-scatter waits for
the matmul once per batch, the all-gather signals the matmul once per whole slice and the local slice after the
direction-1 worker has sent it; the link rate, hop latency, handshake and the fabric mux's measured per-packet
time), not from the module's own arithmetic."""

from __future__ import annotations

import pytest

from ttprefill.device.mesh_timing import (
    FUSED_CCL_CORES_PER_LINK,
    all_gather_matmul_time,
    collective_time,
    fused_matmul_grid,
    matmul_reduce_scatter_time,
)

MS = 1e-3
# a Qwen3.5-9B chunk on an n300: [2048, 4096] bf16 partial sums, 2048 feature columns a chip
PARTIAL = 2048 * 4096 * 2
SHARD = PARTIAL // 2
# 8 MiB of bf16 tiles in 4096 B packets (2 tiles) through one mux at 9.65427 B/cycle (its 4096 B golden row),
# 1 GHz; the link (12.5 GB/s x 0.95 = 11.875 GB/s) is faster, so the mux path sets one slice's time
SLICE_S = SHARD / 4096 * (4096 / 9.65427) * 1e-9
HOP_S, HANDSHAKE_S = 650e-9, 1.1e-6


def test_the_collective_takes_two_rows_of_the_grid_per_link():
    # per link 2 directions x (4 workers + 1 mux) = 10 cores: two rows of the 8-wide grid, 48 cores left
    assert FUSED_CCL_CORES_PER_LINK == 10
    assert fused_matmul_grid(1) == (8, 6)
    assert fused_matmul_grid(2) == (8, 5)  # 20 cores: three rows
    with pytest.raises(ValueError, match="every row"):
        fused_matmul_grid(7)
    with pytest.raises(ValueError, match="at least one link"):
        fused_matmul_grid(0)


def test_one_batch_reduce_scatter_starts_after_the_whole_matmul():
    """The matmul signals the reduce-scatter once per batch, after its last output block: with one batch the
    fused op is exactly the matmul (on its smaller grid) then the reduce-scatter."""
    rs = collective_time("reduce_scatter", PARTIAL, 2, "line", 1).seconds
    f = matmul_reduce_scatter_time(1.4 * MS, 1, PARTIAL, 2, "line", 1, serial_matmul_s=1.1 * MS)
    assert f.seconds == pytest.approx(1.4 * MS + rs, rel=1e-12)
    assert f.hidden_s == pytest.approx(0.0, abs=1e-15)
    assert f.serial_s == pytest.approx(1.1 * MS + rs, rel=1e-12)


@pytest.mark.parametrize("batch_ms", [0.05, 0.2, 0.4, 1.0])
@pytest.mark.parametrize("batches", [2, 4, 8])
def test_batched_reduce_scatter_pipelines_behind_the_matmul(batches, batch_ms):
    m = batch_ms * MS
    traversal = collective_time("reduce_scatter", PARTIAL / batches, 2, "line", 1).seconds
    f = matmul_reduce_scatter_time(m, batches, PARTIAL, 2, "line", 1)
    # a two-stage pipeline of equal batches: the matmul bound exposes one traversal, the link bound one batch
    expected = batches * m + traversal if m >= traversal else m + batches * traversal
    assert f.seconds == pytest.approx(expected, rel=1e-12)
    assert f.seconds >= max(f.matmul_s, f.collective_s)  # never faster than either part alone
    assert f.seconds <= f.matmul_s + batches * traversal


def test_two_chip_gather_hides_nothing_the_local_slice_waits_for_its_send():
    """On a line of two, chip 1's direction-1 worker writes its local slice while sending it to chip 0 and signals
    it after the last packet; the matmul starts there: slice time + the whole matmul."""
    for matmul_ms in (0.3, 1.0, 3.0):
        f = all_gather_matmul_time(matmul_ms * MS, SHARD, 2, "line", 1, serial_matmul_s=0.75 * matmul_ms * MS)
        assert f.seconds == pytest.approx(SLICE_S + HOP_S + matmul_ms * MS, rel=1e-9)
        gather = collective_time("all_gather", SHARD, 2, "line", 1).seconds
        assert gather == pytest.approx(HANDSHAKE_S + HOP_S + SLICE_S, rel=1e-9)
        assert f.seconds >= max(f.matmul_s, f.collective_s)
        assert f.hidden_s == pytest.approx(HANDSHAKE_S, rel=1e-6)


def test_ring_of_eight_hides_part_of_the_gather_behind_a_long_matmul():
    """1x8 ring: each direction carries whole slices one after another (under fuse_op the writer does not split
    the middle slice between the directions, as the plain gather does): 4 slices one way, 3 the other. A
    matmul much longer than the gather hides most of it; a short one waits for the last slice."""
    shard = 2048 * 640 * 2
    slice_s = shard / 4096 * (4096 / 9.65427) * 1e-9  # mux-bound, as above
    last = HANDSHAKE_S + 4 * (slice_s + HOP_S)
    gather = collective_time("all_gather", shard, 8, "ring", 1).seconds
    assert gather == pytest.approx(HANDSHAKE_S + 4 * HOP_S + 3.5 * slice_s, rel=1e-9)  # the plain gather splits
    long = all_gather_matmul_time(20 * gather, shard, 8, "ring", 1)
    assert long.seconds < long.matmul_s + long.collective_s
    assert long.seconds >= max(long.matmul_s, long.collective_s)
    short = all_gather_matmul_time(0.1 * gather, shard, 8, "ring", 1)
    assert short.seconds == pytest.approx(last + 0.1 * gather / 8, rel=1e-9)  # the last slice, then its share
    assert short.seconds <= short.matmul_s + last


def test_only_the_first_output_block_waits_for_the_slices():
    shard = 2048 * 640 * 2
    one = all_gather_matmul_time(5 * MS, shard, 8, "ring", 1, output_blocks=1)
    four = all_gather_matmul_time(5 * MS, shard, 8, "ring", 1, output_blocks=4)
    assert four.seconds <= one.seconds
    with pytest.raises(ValueError, match="output block"):
        all_gather_matmul_time(5 * MS, shard, 8, "ring", 1, output_blocks=0)


def test_one_chip_is_the_matmul_alone():
    assert all_gather_matmul_time(2 * MS, SHARD, 1, "line", 1).seconds == 2 * MS
    assert matmul_reduce_scatter_time(0.5 * MS, 4, PARTIAL, 1, "line", 1).seconds == 2 * MS
    with pytest.raises(ValueError, match="at least one batch"):
        matmul_reduce_scatter_time(0.5 * MS, 0, PARTIAL, 2, "line", 1)
