"""Mesh timing 4 (device/sub_device_timing.py): the in-order two-resource schedule of micro-batches and their
collectives, against cases worked by hand and bounds any schedule must meet. Modeled seconds, deterministic."""

from __future__ import annotations

import random

import pytest

from ttprefill.device.sub_device_timing import (
    COLLECTIVES,
    COMPUTE,
    BlockTimes,
    Task,
    compute_sub_device_cores,
    micro_batch_chunk,
    schedule,
    serial_chunk,
)
from ttprefill.hw import GRID_X, GRID_Y, compute_cores, compute_grid, compute_sub_device


def test_a_collective_runs_beside_the_next_program_and_its_consumer_waits():
    s = schedule([Task("c1", COMPUTE, 2), Task("k1", COLLECTIVES, 1, ("c1",)), Task("c2", COMPUTE, 3),
                  Task("c3", COMPUTE, 1, ("k1",))])
    assert (s.start["k1"], s.end["k1"]) == (2, 3)
    assert (s.start["c2"], s.end["c2"]) == (2, 5)  # beside k1
    assert (s.start["c3"], s.end["c3"]) == (5, 6)
    assert s.makespan == 6 and s.exposed_collectives_s == 0 and s.hidden_collectives_s == 1


def test_one_queue_launches_in_order():
    # c3 needs nothing, but is issued after c2, which waits for the long collective: it waits too
    s = schedule([Task("c1", COMPUTE, 2), Task("k1", COLLECTIVES, 5, ("c1",)), Task("c2", COMPUTE, 1, ("k1",)),
                  Task("c3", COMPUTE, 1)])
    assert (s.start["c2"], s.start["c3"]) == (7, 8)
    assert s.makespan == 9 and s.exposed_collectives_s == 5 and s.hidden_collectives_s == 0


def test_bad_tasks_are_refused_by_name():
    with pytest.raises(ValueError, match="'late'"):
        schedule([Task("x", COMPUTE, 1, ("late",)), Task("late", COMPUTE, 1)])
    with pytest.raises(ValueError, match="choose one of"):
        schedule([Task("x", "dram", 1)])
    with pytest.raises(ValueError, match="twice"):
        schedule([Task("x", COMPUTE, 1), Task("x", COMPUTE, 1)])


def test_two_blocks_of_two_micro_batches_by_hand():
    blk = BlockTimes(first=2, rest=2, proj=2, norm=1, gather=1, reduce_scatter=1.5)
    s = schedule(micro_batch_chunk((0.5, 0.5), [(blk, blk), (blk, blk)]))
    # worked by hand in the issue order MICRO_BATCH_ORDER (one queue, launches in order)
    expected = {"A.start": (0, 0.5), "A.gather0": (0.5, 1.5), "A.first0": (1.5, 3.5), "B.start": (3.5, 4.0),
                "B.gather0": (4.0, 5.0), "A.rest0": (4.0, 6.0), "A.proj0": (6.0, 8.0), "A.rs0": (8.0, 9.5),
                "B.first0": (8.0, 10.0), "A.norm0": (10.0, 11.0), "A.gather1": (11.0, 12.0), "B.rest0": (11.0, 13.0),
                "B.proj0": (13.0, 15.0), "B.rs0": (15.0, 16.5), "A.first1": (15.0, 17.0), "B.norm0": (17.0, 18.0),
                "B.gather1": (18.0, 19.0), "A.rest1": (18.0, 20.0), "A.proj1": (20.0, 22.0), "A.rs1": (22.0, 23.5),
                "B.first1": (22.0, 24.0), "A.norm1": (24.0, 25.0), "B.rest1": (25.0, 27.0), "B.proj1": (27.0, 29.0),
                "B.rs1": (29.0, 30.5), "B.norm1": (30.5, 31.5)}
    for name, (start, end) in expected.items():
        assert (s.start[name], s.end[name]) == (start, end), name
    assert s.busy[COMPUTE] == 29 and s.busy[COLLECTIVES] == 10
    # what waits: A's first gather and B's last reduce-scatter
    assert s.makespan == 31.5 and s.exposed_collectives_s == 2.5 and s.hidden_collectives_s == 7.5


def _random_blocks(rng, n, cheap):
    """Blocks of programs first in [2, 4], rest and proj in [1, 3]; cheap: every reduce-scatter at most any
    block's first projection and every gather at most any block's rest and projection (what each runs beside,
    MICRO_BATCH_ORDER)."""
    out = []
    for _ in range(n):
        pair = []
        for _ in range(2):
            g = rng.uniform(0.05, 2) if cheap else rng.uniform(0.1, 8)
            r = rng.uniform(0.05, 2) if cheap else rng.uniform(0.1, 8)
            pair.append(BlockTimes(rng.uniform(2, 4), rng.uniform(1, 3), rng.uniform(1, 3), rng.uniform(0.1, 1),
                                   g, r))
        out.append(tuple(pair))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_never_faster_than_either_resource_nor_slower_than_both(seed):
    rng = random.Random(seed)
    blocks = _random_blocks(rng, rng.randint(1, 6), cheap=False)
    s = schedule(micro_batch_chunk((rng.uniform(0, 1), rng.uniform(0, 1)), blocks))
    assert s.makespan >= max(s.busy[COMPUTE], s.busy[COLLECTIVES]) - 1e-12
    assert s.makespan <= s.busy[COMPUTE] + s.busy[COLLECTIVES] + 1e-12
    assert 0 <= s.exposed_collectives_s <= s.busy[COLLECTIVES] + 1e-12


@pytest.mark.parametrize("seed", range(20))
def test_cheap_collectives_expose_at_most_one_pair_a_chunk(seed):
    # each reduce-scatter runs beside the other micro-batch's first projection, each gather beside its rest and
    # row-parallel projection; when each is the shorter, only the chunk's first gather and last reduce-scatter wait
    rng = random.Random(100 + seed)
    blocks = _random_blocks(rng, rng.randint(1, 8), cheap=True)
    s = schedule(micro_batch_chunk((0.0, 0.0), blocks))
    first_gather, last_rs = blocks[0][0].gather, blocks[-1][1].reduce_scatter
    assert s.exposed_collectives_s <= first_gather + last_rs + 1e-12


def test_the_serial_chunk_hides_nothing():
    blk = BlockTimes(first=2, rest=2, proj=2, norm=1, gather=1, reduce_scatter=1.5)
    s = schedule(serial_chunk(0.5, [blk, blk, blk]))
    assert s.makespan == 0.5 + 3 * (2 + 2 + 2 + 1 + 1 + 1.5)
    assert s.exposed_collectives_s == 3 * 2.5 and s.hidden_collectives_s == 0


def test_compute_sub_device_is_what_the_collectives_leave_and_the_planners_see():
    from ttprefill.device.program import DataFormat, split_units
    from ttprefill.ops.attention.shapes import FlashAttentionConfig
    from ttprefill.ops.linear.planner import LinearShape, plan_linear

    # one link's 10 collective cores (2 directions x (4 workers + 1 mux)) at the grid's end: 54 left, 6 whole rows
    assert compute_sub_device_cores(1) == ((8, 6), 54)
    assert compute_sub_device_cores(2) == ((8, 5), 44)
    assert compute_grid() == (GRID_X, GRID_Y) and compute_cores() == GRID_X * GRID_Y
    shape = LinearShape(1024, 4096, 4096, DataFormat.Bfp8_b)
    whole = plan_linear(shape)
    with compute_sub_device((8, 6), 54):
        assert compute_cores() == 54 and FlashAttentionConfig().max_cores == 54
        units = split_units(1000)
        assert len(units) == 54 and all(c.y < 6 or (c.y == 6 and c.x < 6) for c, _, _ in units)
        plan = plan_linear(shape)
        assert plan == plan_linear(shape, grid=(8, 6)) != whole
        assert -(-min(plan.slab_tiles, shape.mt) // plan.per_core_m) <= 6  # rows of cores a slab takes
    assert compute_cores() == GRID_X * GRID_Y
    for grid, cores in (((9, 6), None), ((8, 6), 65), ((4, 6), 30), ((8, 6), 40)):
        with pytest.raises(ValueError, match="compute sub-device"):
            with compute_sub_device(grid, cores):
                pass


class _Report:
    def __init__(self, s):
        self.modeled_s = s


def test_a_block_run_is_cut_at_its_projections():
    from ttprefill.bench.ttft_micro import PROJECTION, SequencedTimes, block_parts

    def run(*programs):
        t = SequencedTimes()
        for kind, s in programs:
            if kind == "mark":
                t.mark(PROJECTION)
            else:
                t.add(kind, [_Report(s)])
        return t

    t = run(("matmul", 1), ("matmul", 2), ("gdn", 3), ("gdn", 4), ("mark", 0), ("matmul", 5), ("matmul", 6),
            ("norms", 7))
    assert block_parts(t) == (3, 7, 11, 7)
    assert t.seconds["matmul"] == 14 and t.programs["gdn"] == 2  # still an OpTimes
    # an MLP whose SwiGLU runs in its first matmul: nothing between the projections
    assert block_parts(run(("matmul", 2), ("mark", 0), ("matmul", 3), ("norms", 1))) == (2, 0, 3, 1)
    for bad in (run(("gdn", 1), ("mark", 0), ("matmul", 1), ("norms", 1)),  # no first projection
                run(("matmul", 1), ("matmul", 1), ("norms", 1))):  # no mark
        with pytest.raises(ValueError, match="starts with a projection"):
            block_parts(bad)


def test_the_collectives_dram_traffic_is_bounded_from_their_bytes():
    from ttprefill.device.mesh_timing import collective_time
    from ttprefill.device.sub_device_timing import dram_share
    from ttprefill.hw import CLOCK_HZ, DRAM_PEAK_BYTES_PER_CYCLE

    # a 9B micro-batch's gather on an n300: 4 MiB out and in at the modeled rate, each byte read once and written once
    t = collective_time("all_gather", 512 * 4096 * 2, 2, "line", 1)
    rate = t.busiest_link_bytes / t.seconds
    assert dram_share("all_gather", rate) == pytest.approx(2 * rate / (DRAM_PEAK_BYTES_PER_CYCLE * CLOCK_HZ))
    assert 0.05 < dram_share("all_gather", rate) < dram_share("reduce_scatter", rate) < 0.11
    with pytest.raises(ValueError, match="choose one of"):
        dram_share("all_reduce", rate)


def _collapsed(seq):
    """(micro-batch, what) with each run of one micro-batch's programs as one entry."""
    out = []
    for item in seq:
        if not (out and item == out[-1] and item[1] == "programs"):
            out.append(item)
    return out


def test_the_schedule_issues_what_the_device_stack_issues():
    """The model's issue order (micro_batch_chunk) against the programs and collectives the device stack's
    micro-batches issue on a simulated n300 (tiny model, one chunk of 128 in halves of 64), runs of one half's
    programs taken as one: the same sequence."""
    import threading

    import numpy as np
    from test_hf_oracle import TINY, WEIGHTS

    from ttprefill.device.mesh import SimMesh
    from ttprefill.engine import Engine, EngineOptions

    options = EngineOptions(chunk_tokens=128, block_tokens=64, checkpoint_every_blocks=1,
                            tp_scheme="reduce_scatter", micro_batches=2)
    eng = Engine(TINY, WEIGHTS, backend="sim", options=options, device=SimMesh((1, 2)), model_key="order")
    mesh, issued = eng.model.device, []
    run, gather, scatter = mesh.run, mesh.all_gather, mesh.reduce_scatter
    names = {"micro-batch-0": "A", "micro-batch-1": "B"}

    def spy(kind, fn):
        def call(*a, **k):
            who = names.get(threading.current_thread().name)
            if who is not None:
                issued.append((who, kind))
            return fn(*a, **k)
        return call

    mesh.run = spy("programs", run)
    mesh.all_gather, mesh.reduce_scatter = spy("gather", gather), spy("rs", scatter)
    try:
        eng.prefill(np.random.default_rng(5).integers(0, TINY.vocab_size, 128).tolist())
    finally:
        del mesh.run, mesh.all_gather, mesh.reduce_scatter
    blk = BlockTimes(1, 1, 1, 1, 1, 1)
    kinds = {"gather": "gather", "rs": "rs"}
    modeled = [(t.name[0], kinds.get(t.name[2:].rstrip("0123456789"), "programs"))
               for t in micro_batch_chunk((1, 1), [(blk, blk)] * (2 * TINY.num_layers))]
    assert _collapsed(issued) == _collapsed(modeled)
