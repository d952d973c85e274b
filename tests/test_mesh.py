"""The simulated mesh (device/mesh.py): ttnn's placement and collective semantics against numpy references
written from ttnn's documented behaviour, per-chip programs, the Ethernet timing model against its formula
from the cited constants, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bfp8_reference import bfp8_reference
from simkit import TEST_KERNELS, bf16
from ttprefill import hw
from ttprefill.device.backends import backend_info, open_device
from ttprefill.device.executor import Executor
from ttprefill.device.mesh import REPLICATE, Replicate, Shard, SimMesh, shard_placements
from ttprefill.device.mesh_timing import collective_time
from ttprefill.device.program import (
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    Program,
    Role,
)

MESHES = [(1, 2), (1, 4), (2, 4)]
BF16 = DataFormat.Float16_b
RNG = np.random.default_rng(17)


def values(shape) -> np.ndarray:
    """bf16-exact random values, so gathers can be compared bit for bit."""
    return bf16(RNG.standard_normal(shape).astype(np.float32))


def chip_slices(x: np.ndarray, mesh_shape, placements) -> list[np.ndarray]:
    """What each chip should hold, written from ttnn's mapper semantics (row-major chips; a sharded axis
    splits its dim into equal consecutive slices)."""
    rows, cols = mesh_shape
    out = []
    for r in range(rows):
        for c in range(cols):
            index = [slice(None)] * x.ndim
            # The row axis splits first, the column axis splits each row's part.
            for axis, pos, count in ((0, r, rows), (1, c, cols)):
                p = placements[axis]
                if isinstance(p, Shard):
                    dim = p.dim
                    cur = index[dim]
                    start = cur.start or 0
                    stop = cur.stop if cur.stop is not None else x.shape[dim]
                    step = (stop - start) // count
                    index[dim] = slice(start + pos * step, start + (pos + 1) * step)
            out.append(x[tuple(index)])
    return out


def groups(mesh_shape, cluster_axis):
    rows, cols = mesh_shape
    if cluster_axis is None:
        return [list(range(rows * cols))]
    if cluster_axis == 0:
        return [[r * cols + c for r in range(rows)] for c in range(cols)]
    return [[r * cols + c for c in range(cols)] for r in range(rows)]


# ---------------------------------------------------------------------------------------------- opening
def test_sim_opens_a_mesh_and_says_so():
    assert backend_info("sim").mesh
    mesh = open_device("sim", mesh_shape=(1, 2))
    assert isinstance(mesh, SimMesh) and isinstance(mesh, Executor)
    assert mesh.capabilities.has_mesh and mesh.capabilities.mesh_shape == (1, 2)
    assert mesh.capabilities.models_time and mesh.num_chips == 2
    assert not open_device("sim").capabilities.has_mesh


# ---------------------------------------------------------------------------------------------- placement
@pytest.mark.parametrize("mesh_shape", MESHES)
@pytest.mark.parametrize("placements", [REPLICATE, shard_placements(0), shard_placements(1),
                                        (Shard(0), Shard(1)), (Replicate(), Shard(1)), (Shard(1), Replicate())],
                         ids=["replicate", "shard0", "shard1", "2d", "rep-shard1", "shard1-rep"])
def test_placement_round_trips(mesh_shape, placements):
    mesh = SimMesh(mesh_shape)
    x = values((64, 256))
    t = mesh.upload(x, BF16, placements)
    expected = chip_slices(x, mesh_shape, placements)
    assert t.shape == expected[0].shape
    for got, want in zip(mesh.download_shards(t), expected):
        np.testing.assert_array_equal(got, want)
    composed = mesh.download(t)
    assert t.global_shape == composed.shape
    # Sharded axes concatenate back; a replicated axis contributes its first chip's copy.
    first_of_replicated = [e for k, e in enumerate(expected)
                           if (isinstance(placements[0], Shard) or k // mesh_shape[1] == 0)
                           and (isinstance(placements[1], Shard) or k % mesh_shape[1] == 0)]
    rows = mesh_shape[0] if isinstance(placements[0], Shard) else 1
    row_parts = [first_of_replicated[r * len(first_of_replicated) // rows:(r + 1) * len(first_of_replicated) // rows]
                 for r in range(rows)]
    rebuilt = [np.concatenate(p, axis=placements[1].dim) if isinstance(placements[1], Shard) else p[0]
               for p in row_parts]
    want = np.concatenate(rebuilt, axis=placements[0].dim) if isinstance(placements[0], Shard) else rebuilt[0]
    np.testing.assert_array_equal(composed, want)
    if placements == REPLICATE or all(isinstance(p, Shard) for p in placements):
        np.testing.assert_array_equal(composed, x)
    mesh.free(t)


def test_write_distributes_a_global_array_and_host_traffic_counts_every_chip():
    mesh = SimMesh((1, 4))
    t = mesh.allocate((32, 64), BF16, shard_placements(1))
    assert t.global_shape == (32, 256)
    x = values((32, 256))
    mesh.write(t, x)
    np.testing.assert_array_equal(mesh.download(t), x)
    per_chip = t.shards[0].nbytes
    assert mesh.host_traffic.total("to_device") == 4 * per_chip
    assert mesh.host_traffic.total("to_host") == 4 * per_chip


def test_a_shard_dim_not_divisible_by_the_mesh_names_both_numbers_and_the_fix():
    mesh = SimMesh((1, 4))
    with pytest.raises(ValueError, match=r"dim 1 of size 90 over 4 chips.*90 is not a multiple of 4.*pad dim 1"):
        mesh.upload(np.zeros((32, 90), np.float32), BF16, (Replicate(), Shard(1)))
    with pytest.raises(ValueError, match=r"size 36 over 8 chips"):
        SimMesh((2, 4)).upload(np.zeros((36, 32), np.float32), BF16, shard_placements(0))


# ---------------------------------------------------------------------------------------------- collectives
def _mesh(mesh_shape, topology):
    return SimMesh(mesh_shape, topology, ring_axes={0, 1} if topology == "ring" else None)


# A whole-mesh all-gather on a 2-D mesh needs a 2-D fabric (ttnn refuses it on a line or ring).
GATHERS = [(m, a) for m in MESHES for a in (None, 0, 1) if not (a is None and m[0] > 1)]


@pytest.mark.parametrize("mesh_shape,cluster_axis", GATHERS)
@pytest.mark.parametrize("topology", ["line", "ring"])
@pytest.mark.parametrize("dim", [0, 1])
def test_all_gather_concatenates_each_groups_shards_exactly(mesh_shape, cluster_axis, topology, dim):
    mesh = _mesh(mesh_shape, topology)
    n = mesh.num_chips
    per_chip = [values((64, 64)) for _ in range(n)]
    t = mesh.upload(np.concatenate(per_chip, axis=0), BF16, shard_placements(0))
    out = mesh.all_gather(t, dim, cluster_axis=cluster_axis)
    got = mesh.download_shards(out)
    for g in groups(mesh_shape, cluster_axis):
        want = np.concatenate([per_chip[i] for i in g], axis=dim)
        for i in g:
            np.testing.assert_array_equal(got[i], want)
    assert mesh.last_report.program == "all_gather" and mesh.last_report.cycles >= 0


def _fp64_group_sums(per_chip, g):
    return sum(per_chip[i].astype(np.float64) for i in g)


def _bf16_tolerance(reference: np.ndarray, n: int) -> np.ndarray:
    # Each of the n-1 adds rounds to bf16 (relative error 2^-9 of the partial); partials are at most the
    # sum of magnitudes.
    return n * 2.0 ** -8 * np.abs(reference) + 1e-6 + (n - 1) * 2.0 ** -9 * 4.0


@pytest.mark.parametrize("mesh_shape", MESHES)
@pytest.mark.parametrize("cluster_axis", [None, 0, 1])
@pytest.mark.parametrize("topology", ["line", "ring"])
def test_reduce_scatter_gives_each_chip_its_chunk_of_the_sum(mesh_shape, cluster_axis, topology):
    mesh = _mesh(mesh_shape, topology)
    n = mesh.num_chips
    per_chip = [values((64, 256)) for _ in range(n)]
    t = mesh.upload(np.concatenate(per_chip, axis=0), BF16, shard_placements(0))
    out = mesh.reduce_scatter(t, 1, cluster_axis=cluster_axis)
    got = mesh.download_shards(out)
    for g in groups(mesh_shape, cluster_axis):
        total = _fp64_group_sums(per_chip, g)
        chunks = np.split(total, len(g), axis=1)
        for pos, i in enumerate(g):
            assert got[i].shape == chunks[pos].shape
            assert np.all(np.abs(got[i] - chunks[pos]) <= _bf16_tolerance(chunks[pos], len(g)))
            np.testing.assert_array_equal(got[i], bf16(got[i]))  # stored as bf16: the sum was kept in bf16


@pytest.mark.parametrize("mesh_shape", MESHES)
@pytest.mark.parametrize("cluster_axis", [None, 0, 1])
@pytest.mark.parametrize("width", [256, 32], ids=["composite", "broadcast"])
def test_all_reduce_gives_every_chip_the_groups_sum(mesh_shape, cluster_axis, width):
    mesh = SimMesh(mesh_shape)
    n = mesh.num_chips
    per_chip = [values((32, width)) for _ in range(n)]
    t = mesh.upload(np.concatenate(per_chip, axis=0), BF16, shard_placements(0))
    out = mesh.all_reduce(t, cluster_axis=cluster_axis)
    got = mesh.download_shards(out)
    for g in groups(mesh_shape, cluster_axis):
        total = _fp64_group_sums(per_chip, g)
        for i in g:
            assert np.all(np.abs(got[i] - total) <= _bf16_tolerance(total, len(g)))
        for i in g[1:]:
            np.testing.assert_array_equal(got[i], got[g[0]])  # identical on every chip of the group


def test_fp32_reductions_accumulate_in_fp32():
    mesh = SimMesh((1, 4))
    per_chip = [RNG.standard_normal((32, 128)).astype(np.float32) for _ in range(4)]
    t = mesh.upload(np.concatenate(per_chip, axis=0), DataFormat.Float32, shard_placements(0))
    got = mesh.download_shards(mesh.all_reduce(t))
    total = sum(p.astype(np.float64) for p in per_chip)
    for g in got:
        np.testing.assert_allclose(g, total, rtol=1e-6, atol=1e-6)


def test_bf16_accumulation_is_coarser_than_fp32_on_sums_that_need_more_bits():
    """Chip 0 holds 1, chips 1-3 hold 2^-8 (all bf16 values). Their sum 1 + 3 * 2^-8 needs 8 fraction bits,
    one more than bf16 has: a bf16 accumulation (ttnn: "the reduction is performed in BFLOAT16") cannot
    return it, whatever the order of its adds; fp32 returns it exactly."""
    mesh = SimMesh((1, 4))
    parts = [np.full((32, 128), v, np.float32) for v in (1.0, 2.0 ** -8, 2.0 ** -8, 2.0 ** -8)]
    exact = np.float32(1 + 3 * 2.0 ** -8)
    got = mesh.download_shards(mesh.all_reduce(mesh.upload(np.concatenate(parts), BF16, shard_placements(0))))[0]
    np.testing.assert_array_equal(got, bf16(got))
    assert not np.any(got == exact) and np.all(np.abs(got - exact) <= 3 * 2.0 ** -8)  # three adds, half an ulp (2^-8) each
    t32 = mesh.upload(np.concatenate(parts), DataFormat.Float32, shard_placements(0))
    assert np.all(mesh.download_shards(mesh.all_reduce(t32))[0] == exact)


def test_collective_output_placements_follow_ttnn():
    mesh = SimMesh((2, 4))
    t = mesh.upload(values((64, 256)), BF16, (Shard(0), Shard(1)))
    assert mesh.all_gather(t, 1, cluster_axis=1).placements == (Shard(0), Replicate())
    assert mesh.all_reduce(t, cluster_axis=1).placements == (Shard(0), Replicate())
    assert mesh.all_reduce(t).placements == REPLICATE
    rs = mesh.reduce_scatter(mesh.upload(values((64, 256)), BF16), 1, cluster_axis=1)
    assert rs.placements == (Replicate(), Shard(1)) and rs.shape == (64, 64)
    # Composing a reduce-scatter of replicated inputs gives the whole sum (4 equal copies).
    x = values((32, 128))
    rs = mesh.reduce_scatter(mesh.upload(x, BF16), 1, cluster_axis=1)
    assert np.all(np.abs(mesh.download(rs) - 4 * x.astype(np.float64)) <= _bf16_tolerance(4 * x, 4))


def test_collective_errors_name_the_problem_and_the_fix():
    mesh = SimMesh((1, 4))
    t = mesh.upload(values((32, 90)), BF16)
    with pytest.raises(ValueError, match=r"dim 1 of size 90 over 4 chips.*not a multiple of 4.*pad dim 1"):
        mesh.reduce_scatter(t, 1)
    with pytest.raises(ValueError, match=r"no ring over axis 1.*topology='line'.*ring_axes"):
        mesh.all_gather(t, 1, cluster_axis=1, topology="ring")
    with pytest.raises(ValueError, match="cluster_axis must be 0, 1 or None"):
        mesh.all_gather(t, 1, cluster_axis=2)
    with pytest.raises(ValueError, match="unknown topology"):
        SimMesh((1, 2), "torus")


def test_a_mesh_without_a_fabric_refuses_every_collective_and_stays_usable():
    """Topology "none" (a pipeline split's mesh: no collective runs) refuses a collective, whatever topology the
    call asks for, before it allocates anything; the chips still hold and move data."""
    mesh = SimMesh((1, 2), "none")
    data = values((32, 64))
    t = mesh.upload(data, BF16, shard_placements(1))
    held = [chip.dram_bytes_in_use() for chip in mesh.chips]
    for collective in (lambda: mesh.all_gather(t, 1), lambda: mesh.reduce_scatter(t, 1),
                       lambda: mesh.all_reduce(t), lambda: mesh.all_gather(t, 1, topology="line")):
        with pytest.raises(ValueError, match="opened without one .*topology 'line' or 'ring'"):
            collective()
    assert [chip.dram_bytes_in_use() for chip in mesh.chips] == held
    assert np.array_equal(mesh.download(t), data)


def test_a_t3000_as_1x8_is_a_ring_and_as_2x4_is_not():
    assert SimMesh((1, 8), "ring").ring_axes == {1}
    t = SimMesh((2, 4), "ring")
    x = t.upload(values((32, 256)), BF16, shard_placements(1))
    with pytest.raises(ValueError, match="no ring over axis 1"):
        t.all_gather(x, 1, cluster_axis=1)
    t.all_gather(x, 1, cluster_axis=0)  # a pair of chips: a ring of two is a line


def test_a_whole_mesh_all_gather_on_a_2d_mesh_is_refused_as_ttnn_refuses_it():
    mesh = SimMesh((2, 4))
    x = mesh.upload(values((32, 256)), BF16, shard_placements(1))
    with pytest.raises(ValueError, match=r"whole 2x4 mesh needs a 2-D fabric.*cluster_axis"):
        mesh.all_gather(x, 1)


def test_a_whole_mesh_reduction_on_a_2d_mesh_is_timed_axis_by_axis():
    mesh = SimMesh((2, 4), timing_only=True)
    t = mesh.allocate((1024, 2048), BF16)
    nbytes = t.shards[0].nbytes
    mesh.reduce_scatter(t, 1)
    want = (collective_time("reduce_scatter", nbytes, 4, "line", 1).seconds
            + collective_time("reduce_scatter", nbytes / 4, 2, "line", 1).seconds)
    assert mesh.last_report.cycles / hw.CLOCK_HZ == pytest.approx(want, rel=1e-6)
    mesh.all_reduce(t)
    want = collective_time("all_reduce", nbytes, 4, "line", 1).seconds + collective_time("all_reduce", nbytes, 2, "line", 1).seconds
    assert mesh.last_report.cycles / hw.CLOCK_HZ == pytest.approx(want, rel=1e-6)


# ---------------------------------------------------------------------------------------------- programs
def _copy_program(src, dst, tiles: int) -> Program:
    """reader -> copy -> writer on one core over the first `tiles` tiles."""
    c = CoreCoord(0, 0)
    cores = CoreRangeSet.of([c])
    return Program(
        kernels=[
            Kernel(TEST_KERNELS / "reader_tiles.cpp", Role.RISCV_1, cores, src.accessor_args() + src.accessor_args(),
                   runtime_args={c: [src.address, 0, 0, tiles, 1, 0]}),
            Kernel(TEST_KERNELS / "compute_op.cpp", Role.COMPUTE, cores, defines={"OP_COPY": "1"},
                   runtime_args={c: [tiles, 0]}, compute_config=ComputeConfig(fp32_dest_acc_en=False)),
            Kernel(TEST_KERNELS / "writer_tiles.cpp", Role.RISCV_0, cores, dst.accessor_args(),
                   runtime_args={c: [dst.address, 0, tiles]}),
        ],
        circular_buffers=[CircularBuffer(0, src.data_format, src.page_size, 2, cores),
                          CircularBuffer(1, src.data_format, src.page_size, 2, cores),
                          CircularBuffer(16, dst.data_format, dst.page_size, 2, cores)],
        inputs={"src": src}, outputs={"dst": dst}, name=f"copy_{tiles}")


def test_one_program_runs_on_every_chip_on_its_own_shard():
    mesh = SimMesh((1, 4))
    x = values((128, 128))
    src = mesh.upload(x, BF16, shard_placements(1))
    dst = mesh.allocate(src.shape, BF16, src.placements)
    report = mesh.run(_copy_program(src, dst, src.num_pages))
    np.testing.assert_array_equal(mesh.download(dst), x)
    assert report.cycles == max(report.extra["per_chip_cycles"].values())


def test_per_chip_programs_with_per_chip_args():
    """Chip i copies its first i+1 tiles (ttnn.MeshProgramDescriptor: one program per coordinate)."""
    mesh = SimMesh((1, 4))
    x = values((128, 32))  # 4 tiles a chip (replicated)
    src = mesh.upload(x, BF16)
    dst = mesh.upload(np.zeros_like(x), BF16)
    report = mesh.run_per_chip({(0, c): _copy_program(src, dst, c + 1) for c in range(4)}, name="copy_per_chip")
    for c, got in enumerate(mesh.download_shards(dst)):
        np.testing.assert_array_equal(got[:32 * (c + 1)], x[:32 * (c + 1)])
        assert not np.any(got[32 * (c + 1):])
    cycles = [report.extra["per_chip_cycles"][f"0,{c}"] for c in range(4)]
    assert cycles == sorted(cycles) and cycles[0] < cycles[-1]  # more tiles, more time
    assert report.cycles == cycles[-1]  # the step is the slowest chip's
    with pytest.raises(ValueError, match=r"a program for every chip of the 1x4 mesh; missing \[\(0, 3\)\]"):
        mesh.run_per_chip({(0, c): _copy_program(src, dst, 1) for c in range(3)})


# ---------------------------------------------------------------------------------------------- timing
def _formula(kind, nbytes, n, topology, links):
    """The collective's time written out from docs/TIMING.md's Ethernet section and hw.py's constants, for
    bf16 tiles at the central setting: 2 tiles (4096 B) a fabric packet (4352 B of payload hold two 2048 B
    tiles), so the mux of each link direction passes the busiest direction's bytes at its measured 4096 B
    rate, and the slower of it and the link sets the time."""
    rate = links * hw.ETH_LINK_RAW_BYTES_PER_S * hw.ETH_PAYLOAD_EFFICIENCY
    mux_rate = links * dict(hw.FABRIC_MUX_BYTES_PER_CYCLE_BY_PAYLOAD)[4096] * hw.CLOCK_HZ
    ring = topology == "ring" and n > 2

    def gather(shard):
        return hw.ETH_HANDSHAKE_S + (math.ceil((n - 1) / 2) if ring else n - 1) * hw.ETH_HOP_LATENCY_S + \
            (n - 1) * shard / (2 if ring else 1) / min(rate, mux_rate)

    def scatter(x):
        return hw.ETH_HANDSHAKE_S + (n - 1) * hw.ETH_HOP_LATENCY_S + \
            (n - 1) * x / n / (2 if ring else 1) / min(rate, mux_rate)

    return {"all_gather": gather, "reduce_scatter": scatter,
            "all_reduce": lambda x: scatter(x) + gather(x / n)}[kind](nbytes)


@pytest.mark.parametrize("kind", ["all_gather", "reduce_scatter", "all_reduce"])
@pytest.mark.parametrize("mesh_shape,cluster_axis,topology", [((1, 2), 1, "line"), ((1, 8), 1, "ring"),
                                                                ((1, 8), 1, "line"), ((2, 4), 1, "line"),
                                                                ((2, 4), 0, "line")])
def test_modeled_collective_time_is_the_formula_of_the_cited_constants(kind, mesh_shape, cluster_axis, topology):
    mesh = SimMesh(mesh_shape, topology, timing_only=True)
    t = mesh.allocate((1024, 2048), BF16)
    getattr(mesh, kind)(t, **({} if kind == "all_reduce" else {"dim": 1}), cluster_axis=cluster_axis)
    n = mesh_shape[cluster_axis]
    nbytes = t.shards[0].nbytes
    want = _formula(kind, nbytes, n, topology, hw.ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR)
    modeled = mesh.last_report.cycles / hw.CLOCK_HZ
    assert modeled == pytest.approx(want, rel=1e-6, abs=1e-9)
    # A bound no model may beat: every byte that must cross the busiest link at the raw link rate.
    links = hw.ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR
    must_cross = {"all_gather": (n - 1) * nbytes / 2, "reduce_scatter": (n - 1) * nbytes / n / 2,
                  "all_reduce": (n - 1) * nbytes / n}[kind]
    assert modeled >= must_cross / (links * hw.ETH_LINK_RAW_BYTES_PER_S)


def test_timing_only_collectives_move_no_data_but_take_time():
    mesh = SimMesh((1, 2), timing_only=True)
    t = mesh.allocate((64, 64), BF16, shard_placements(1))
    out = mesh.all_gather(t, 1)
    assert out.shape == (64, 128) and not np.any(mesh.download(out))
    assert mesh.last_report.cycles > 0


def test_ring_beats_line_on_large_gathers_and_one_chip_costs_nothing():
    big = 64 * 2**20
    line = collective_time("all_gather", big, 8, "line", 2).seconds
    ring = collective_time("all_gather", big, 8, "ring", 2).seconds
    assert ring < line
    assert collective_time("all_reduce", big, 1, "line", 2).seconds == 0.0
    # a ring of two chips is a line
    two_ring = collective_time("reduce_scatter", big, 2, "ring", 2)
    two_line = collective_time("reduce_scatter", big, 2, "line", 2)
    assert (two_ring.seconds, two_ring.hops, two_ring.busiest_link_bytes) == \
        (two_line.seconds, two_line.hops, two_line.busiest_link_bytes)


def test_pages_of_a_replicated_tensor_are_every_chips_and_a_sharded_one_refuses_them():
    from ttprefill.device import formats

    mesh = SimMesh((1, 2))
    x = values((64, 64))
    t = mesh.upload(np.zeros_like(x), BF16)
    mesh.write_pages(t, 0, formats.to_device_bytes(x, BF16))
    for got in mesh.download_shards(t):
        np.testing.assert_array_equal(got, x)
    np.testing.assert_array_equal(mesh.read_pages(t, 1, 2), formats.to_device_bytes(x, BF16)[t.page_size:3 * t.page_size])
    sharded = mesh.upload(x, BF16, shard_placements(1))
    with pytest.raises(ValueError, match="use download_shards"):
        mesh.read_pages(sharded, 0, 1)
    assert mesh.dram_bytes_in_use() == mesh.chips[0].dram_bytes_in_use() > 0


def test_the_cost_setting_sets_the_share_of_the_link_a_collective_gets():
    """low: the link alone at its share; central and high: the slower of that and the mux of the link
    direction (bf16: 4096 B packets at the mux's measured 4096 B rate)."""
    times = {}
    mux_rate = dict(hw.FABRIC_MUX_BYTES_PER_CYCLE_BY_PAYLOAD)[4096] * hw.CLOCK_HZ
    for costs in ("low", "central", "high"):
        mesh = SimMesh((1, 2), timing_only=True, costs=costs)
        mesh.all_gather(mesh.allocate((2048, 2048), BF16), 1)
        times[costs] = mesh.last_report.cycles / hw.CLOCK_HZ
        nbytes = 2048 * 2048 * 2
        share = hw.ETH_PAYLOAD_EFFICIENCY_BY_SETTING[costs]
        link = nbytes / (hw.ETH_LINK_RAW_BYTES_PER_S * share)
        transfer = link if costs == "low" else max(link, nbytes / mux_rate)
        want = hw.ETH_HANDSHAKE_S + hw.ETH_HOP_LATENCY_S + transfer
        assert times[costs] == pytest.approx(want, rel=1e-6)
    assert times["low"] < times["central"] < times["high"]


def test_bfp8_reduce_scatter_on_two_chips_is_one_bf16_add_packed_in_bfp8():
    """The n300's line of two: each chip adds the other's chunk to its own in the 16-bit DST and packs the sum in
    the input's format (ttnn 0.81.1 line_reduction.cpp; every CB in the input dtype)."""
    mesh = SimMesh((1, 2))
    raw = [bf16(RNG.standard_normal((64, 256)).astype(np.float32) * s) for s in (1.0, 3.0)]
    t = mesh.upload(np.concatenate(raw, axis=0), DataFormat.Bfp8_b, shard_placements(0))
    held = mesh.download_shards(t)
    for h, r in zip(held, raw):
        np.testing.assert_array_equal(h, bfp8_reference(r))  # the upload packs by the same rule
    got = mesh.download_shards(mesh.reduce_scatter(t, 0, cluster_axis=1))
    expected = bfp8_reference(bf16(held[0].astype(np.float64) + held[1]))
    np.testing.assert_array_equal(got[0], expected[:32])
    np.testing.assert_array_equal(got[1], expected[32:])


def test_bfp8_partial_sums_are_stored_in_bfp8_at_every_hop():
    """On a line of four, the partial sum of a chunk travels from each end to its owner, stored in bfp8 by every
    chip that adds to it (the intermediate tensor has the input's dtype). Column 0 holds 1.0 on chip 0, column 1
    2^-7 on chips 1 and 2 (each exact in bfp8 on its own chip); the total 1 + 2^-6 is exact in bfp8. Chip 3's
    chunk is summed 0 + 1 + 2 + 3: 1.0 and 2^-7 share a run after the first add, where 2^-7 is half a step and
    rounds to 0 (ties to even), so column 1 is lost twice. Chip 0's chunk is summed from the far end, 3 + 2 + 1
    (2^-6 exact) then + 0: exact. One rounding of the fp64 sum would give 2^-6 on both."""
    mesh = SimMesh((1, 4))
    parts = [np.zeros((32 * 4, 32), np.float32) for _ in range(4)]
    parts[0][:, 0] = 1.0
    parts[1][:, 1] = parts[2][:, 1] = 2.0 ** -7
    t = mesh.upload(np.concatenate(parts), DataFormat.Bfp8_b, shard_placements(0))
    got = mesh.download_shards(mesh.reduce_scatter(t, 0, cluster_axis=1))
    assert np.all(got[0][:, 0] == 1.0) and np.all(got[0][:, 1] == 2.0 ** -6)
    assert np.all(got[3][:, 0] == 1.0) and np.all(got[3][:, 1] == 0.0)
    assert np.all(bfp8_reference(sum(p.astype(np.float64) for p in parts))[:, 1] == 2.0 ** -6)


def test_bfp8_all_gather_moves_the_bytes_unchanged_at_the_bfp8_page_size():
    mesh = SimMesh((1, 2))
    raw = bf16(RNG.standard_normal((64, 256)).astype(np.float32))
    t = mesh.upload(raw, DataFormat.Bfp8_b, shard_placements(0))
    out = mesh.all_gather(t, 0, cluster_axis=1)
    assert out.data_format is DataFormat.Bfp8_b
    for g in mesh.download_shards(out):
        np.testing.assert_array_equal(g, bfp8_reference(raw))
    timed = mesh.last_report.extra["collective"][0]
    bf16_time = collective_time("all_gather", 32 * 256 * 2, 2, "line", mesh.links, page_bytes=2048)
    assert timed["packet_bytes"] == 4 * 1088  # four bfp8 tiles a fabric packet (two bf16 ones)
    assert timed["busiest_link_bytes"] == 8 * 1088 and timed["seconds"] < bf16_time.seconds


def test_timing_only_spmd_on_the_first_chip_models_what_every_chip_models():
    every, first = (SimMesh((1, 4), timing_only=True, spmd_first_chip_only=flag) for flag in (False, True))
    cycles = []
    for mesh in (every, first):
        src = mesh.upload(values((128, 128)), BF16, shard_placements(1))
        dst = mesh.allocate(src.shape, BF16, src.placements)
        cycles.append(mesh.run(_copy_program(src, dst, src.num_pages)).cycles)
    assert len(set(every.last_report.extra["per_chip_cycles"].values())) == 1
    assert cycles[0] == cycles[1] and first.last_report.extra["simulated_chips"] == 1
    with pytest.raises(ValueError, match="needs timing_only=True"):
        SimMesh((1, 2), spmd_first_chip_only=True)
