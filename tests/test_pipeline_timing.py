"""The pipeline split's forward schedule (device/pipeline_timing.py) against timelines worked out by hand."""

import pytest

from ttprefill import hw
from ttprefill.device.host_link import HostTransfer, call_seconds, pcie_bytes_per_s
from ttprefill.device.pipeline_timing import (
    HANDOFF,
    PROGRAM,
    TRANSFER,
    StageRun,
    Step,
    forward_runs,
    forward_steps,
    forward_time,
    schedule,
    stage_link,
    stage_transfer_seconds,
)
from ttprefill.model.pipeline_split import PipelineSplitError, stage_layers

ROWS = HostTransfer(HANDOFF, "up", 2048 * 4096 * 2, 2048)


def by_hand(t: HostTransfer) -> float:
    """A transfer on a chip with its own PCIe link: the calls' fixed time, then the bytes at the link's rate."""
    return t.calls * call_seconds(t.direction) + t.nbytes / pcie_bytes_per_s(t.direction, t.page_size)


def test_stage_layers_split_evenly_or_front_loaded():
    assert stage_layers(32, 2) == [range(0, 16), range(16, 32)]
    assert stage_layers(64, 8) == [range(8 * k, 8 * k + 8) for k in range(8)]
    assert stage_layers(10, 3) == [range(0, 4), range(4, 7), range(7, 10)]
    with pytest.raises(PipelineSplitError, match="at most 4 chips"):
        stage_layers(4, 5)
    with pytest.raises(PipelineSplitError, match="at least one stage"):
        stage_layers(4, 0)


def test_second_chip_of_an_n300_takes_the_slower_of_pcie_and_ethernet():
    up = HostTransfer(HANDOFF, "up", 1 << 24, 2048)
    assert stage_transfer_seconds(up, 0, chips=2) == pytest.approx(by_hand(up))
    eth = up.nbytes / (hw.ETH_LINK_RAW_BYTES_PER_S * hw.ETH_PAYLOAD_EFFICIENCY_BY_SETTING["central"])
    pcie = up.nbytes / pcie_bytes_per_s("up", 2048)
    assert stage_transfer_seconds(up, 1, chips=2) == pytest.approx(call_seconds("up") + max(pcie, eth))
    assert stage_transfer_seconds(up, 1, chips=1) == pytest.approx(by_hand(up))
    assert [stage_link(k, 8) for k in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_steady_state_forward_runs_both_stages_at_once():
    """Stage 1 on chunk c (its rows on the host since the last forward) beside stage 0 on chunk c + 1: the forward
    takes the longer stage plus what must follow it, not their sum."""
    down = HostTransfer(HANDOFF, "down", ROWS.nbytes, 2048)
    runs = [StageRun(1, 4, 0.10, uploads=(down,)), StageRun(0, 5, 0.12, reads=(ROWS,))]
    t = forward_time(runs, chips=1, start=2.0)
    d, u = by_hand(down), by_hand(ROWS)
    assert t.start["s1c4:down0"] == 2.0
    assert t.start["s1c4"] == pytest.approx(2.0 + d)
    assert t.start["s0c5"] == 2.0  # its input went down ahead
    # stage 0's rows for the next forward come up once its programs are done; the link is free by then
    assert t.start[f"s0c5:{HANDOFF}"] == pytest.approx(2.12)
    assert t.makespan == pytest.approx(max(2.0 + d + 0.10, 2.12 + u))
    assert t.stage_busy == {0: 0.12, 1: 0.10}


def test_filling_forward_waits_for_the_rows_it_hands_on():
    """The first forward: stage 0 on chunks 0 and 1 go first; stage 1 on chunk 0 can be issued only once the host
    has read chunk 0's rows from stage 0 (and then writes them down)."""
    down = HostTransfer(HANDOFF, "down", ROWS.nbytes, 2048)
    made = {(0, 0): StageRun(0, 0, 0.1, reads=(ROWS,)), (1, 0): StageRun(1, 0, 0.1, uploads=(down,)),
            (0, 1): StageRun(0, 1, 0.1, reads=(ROWS,))}
    order = forward_runs(2, known=2, ran=[0, 0])
    assert order == [(0, 0), (0, 1), (1, 0)]
    runs = [made[r] for r in order]
    steps = forward_steps(runs)
    assert [s.name for s in steps if s.kind == PROGRAM] == ["s0c0", "s0c1", "s1c0"]
    t = forward_time(runs, chips=1)
    u, d = by_hand(ROWS), by_hand(down)
    assert t.start["s0c1"] == pytest.approx(0.1)
    assert t.end[f"s0c0:{HANDOFF}"] == pytest.approx(0.1 + u)
    assert t.start["s1c0"] == pytest.approx(0.1 + u + d)
    assert t.makespan == pytest.approx(max(0.1 + u + d + 0.1, 0.2 + u))  # the link is idle again when c1's read is ready


def test_link_gap_serves_a_later_issued_transfer_that_is_ready_sooner():
    late = Step("read", 0, TRANSFER, transfer=ROWS, deps=("p0",))
    steps = [Step("p0", 0, PROGRAM, 1.0), late, Step("up1", 1, TRANSFER, transfer=ROWS)]
    t = schedule(steps, chips=2)  # chips 0 and 1 share card 0's link
    assert t.start["up1"] == 0.0
    assert t.start["read"] == pytest.approx(1.0)


def test_schedule_refuses_malformed_steps():
    with pytest.raises(ValueError, match="not issued before"):
        schedule([Step("a", 0, PROGRAM, 1.0, deps=("b",))], chips=1)
    with pytest.raises(ValueError, match="issued twice"):
        schedule([Step("a", 0, PROGRAM, 1.0), Step("a", 0, PROGRAM, 1.0)], chips=1)
    with pytest.raises(ValueError, match="carries a HostTransfer"):
        schedule([Step("a", 0, TRANSFER)], chips=1)
    with pytest.raises(ValueError, match="HANDOFF upload"):
        forward_steps([StageRun(0, 0, 0.1), StageRun(1, 0, 0.1)])
    with pytest.raises(ValueError, match="issue that run first"):
        forward_steps([StageRun(1, 0, 0.1, uploads=(ROWS,)), StageRun(0, 0, 0.1)])
    with pytest.raises(ValueError, match="read times"):
        StageRun(0, 0, 0.1, reads=(ROWS,), read_after_s=(0.01, 0.02))
    with pytest.raises(ValueError, match="inside the programs"):
        StageRun(0, 0, 0.1, reads=(ROWS,), read_after_s=(0.2,))


def test_each_forward_runs_every_stage_as_far_ahead_as_its_place_allows():
    """Four stages, chunks known two ahead of the forwarded one at most: stage k runs up to 3 - k ahead, what the
    chunks known allow, and not what it ran before; the runs go by wavefront (chunk + stage), then by stage, so a
    stage's next run is queued before the host waits for the rows its last one hands on."""
    first = forward_runs(4, known=3, ran=[0, 0, 0, 0])
    assert first == [(0, 0), (0, 1), (1, 0), (0, 2), (1, 1), (2, 0), (1, 2), (2, 1), (3, 0)]
    # the next forward (counted from its own chunk, known 3 ahead now): stage 0 ran two of its chunks in the first
    # (it could not go past the chunks known then) and catches up, the others go one chunk further each
    assert sorted(forward_runs(4, known=4, ran=[2, 2, 1, 0])) == [(0, 2), (0, 3), (1, 2), (2, 1), (3, 0)]


def test_a_read_issued_inside_the_programs_leaves_the_link_free_for_what_follows():
    """Two checkpoint reads issued a quarter and half-way into a stage's programs (as its GDN blocks end) are
    done while the programs run; the rows read at the end start at once."""
    ckpt = HostTransfer("gdn_checkpoint", "up", 1 << 20, 4096)
    run = StageRun(0, 0, 0.2, reads=(ckpt, ckpt, ROWS), read_after_s=(0.05, 0.1, 0.2))
    t = forward_time([run], chips=1)
    assert t.start["s0c0:up0"] == pytest.approx(0.05)
    assert t.start["s0c0:up1"] == pytest.approx(max(0.1, 0.05 + by_hand(ckpt)))
    assert t.start[f"s0c0:{HANDOFF}"] == pytest.approx(0.2)
    assert t.makespan == pytest.approx(0.2 + by_hand(ROWS))
    assert t.stage_busy == {0: pytest.approx(0.2)}
    after = forward_time([StageRun(0, 0, 0.2, reads=(ckpt, ckpt, ROWS))], chips=1)
    assert after.makespan == pytest.approx(0.2 + 2 * by_hand(ckpt) + by_hand(ROWS))
