"""Issue 18, the simulator's half: every kind of kernel fault stops the run with a message naming the core,
the kernel and the call or state at fault, and the device stays usable (docs/faults.md).

Each broken kernel in kernels/ replaces one of the three kernels of the tests' tile pipeline
(reader_tiles -> compute_op copy -> writer_tiles, on core (0,0), 4 tiles)."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from simkit import bf16, run_tile_op, tile_op_program
from ttprefill.device.program import CoreCoord, CoreRangeSet, DataFormat, Semaphore
from ttprefill.device.sim_device import SimError

FAULTS = Path(__file__).parent / "kernels"
A = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 100
CORE = CoreCoord(0, 0)


def still_usable(sim):
    out = run_tile_op(sim, {"OP_COPY": "1"}, A)
    np.testing.assert_array_equal(out, bf16(A))


@pytest.fixture
def tensors(sim):
    ta = sim.upload(A, DataFormat.Float16_b)
    to = sim.allocate(A.shape, DataFormat.Float32)
    yield ta, to
    sim.free(ta)
    sim.free(to)


def pipeline(sim, tensors, *, reader=None, compute=None, writer=None, writer_args=None):
    """The tile pipeline with some of its kernels swapped for broken ones (same arguments)."""
    ta, to = tensors
    p = tile_op_program(sim, {"OP_COPY": "1"}, ta, None, to)
    if reader:
        p.kernels[0] = replace(p.kernels[0], source=FAULTS / reader)
    if compute:
        p.kernels[1] = replace(p.kernels[1], source=FAULTS / compute, defines={})
    if writer:
        p.kernels[2] = replace(p.kernels[2], source=FAULTS / writer,
                               runtime_args={CORE: writer_args} if writer_args is not None else p.kernels[2].runtime_args)
    return p


def fails(sim, program, pattern, kernel):
    """Runs a broken program: it must stop with a SimError naming core (0,0), the kernel and `pattern`."""
    with pytest.raises(SimError) as e:
        sim.run(program)
    msg = str(e.value)
    assert re.search(pattern, msg), msg
    assert "core (0,0)" in msg, msg
    assert kernel in msg, msg
    still_usable(sim)
    return msg


# ---------------------------------------------------------------- circular buffer balance

def test_push_never_consumed(sim, tensors):
    fails(sim, pipeline(sim, tensors, reader="reader_extra_push.cpp"),
          r"cb 0: 1 of the 5 pages riscv_1 kernel .*reader_extra_push.cpp pushed were never waited for nor popped",
          "reader_extra_push.cpp")


def test_reserve_without_push(sim, tensors):
    fails(sim, pipeline(sim, tensors, reader="reader_reserve_no_push.cpp"),
          r"cb 0: riscv_1 kernel .*reader_reserve_no_push.cpp reserved 1 pages after its last push and never pushed them", "reader_reserve_no_push.cpp")


def test_pop_more_than_waited(sim, tensors):
    fails(sim, pipeline(sim, tensors, writer="writer_pop_unwaited.cpp"),
          r"cb_pop_front\(16, 2\): pops 2 pages but cb_wait_front covered only 1", "writer_pop_unwaited.cpp")


def test_unpack_without_wait(sim, tensors):
    fails(sim, pipeline(sim, tensors, compute="compute_unwaited.cpp"),
          r"copy_tile: tile 1 of CB 0 was not waited for \(cb_wait_front covered 1 pages\)", "compute_unwaited.cpp")


# ---------------------------------------------------------------- barriers

def test_push_before_read_barrier(sim, tensors):
    fails(sim, pipeline(sim, tensors, reader="reader_no_barrier.cpp"),
          r"cb_push_back\(0, 1\): a noc_async_read into the pushed pages .* has not completed", "reader_no_barrier.cpp")


def test_pop_before_write_barrier(sim, tensors):
    fails(sim, pipeline(sim, tensors, writer="writer_no_barrier.cpp"),
          r"cb_pop_front\(16, 1\): a noc_async_write from the popped pages .* has not completed", "writer_no_barrier.cpp")


def test_data_read_before_its_barrier_is_poison(sim, tensors):
    """Not stopped (a plain load cannot be seen), but what the kernel read early is poison: NaN here."""
    ta, to = tensors
    sim.run(pipeline(sim, tensors, reader="reader_peek_before_barrier.cpp"))
    out = sim.download(to)
    # the first word of each tile's first face: elements 0 and 1 of row 0, bf16 0xFFFF each
    corners = [(r, c) for r in (0, 32) for c in (0, 1, 32, 33)]
    assert all(np.isnan(out[r, c]) for r, c in corners), out[:2, :2]
    mask = np.ones(out.shape, bool)
    for r, c in corners:
        mask[r, c] = False
    np.testing.assert_array_equal(out[mask], bf16(A)[mask])


def test_write_from_l1_a_read_is_still_filling(sim, tensors):
    fails(sim, pipeline(sim, tensors, reader="reader_forward_no_barrier.cpp"),
          r"noc_async_write: its source .* is still being filled by a noc_async_read", "reader_forward_no_barrier.cpp")


# ---------------------------------------------------------------- where NoC transfers land

def test_read_past_the_reserved_page(sim, tensors):
    fails(sim, pipeline(sim, tensors, reader="reader_past_page.cpp"),
          r"noc_async_read \(destination\): 6144 bytes at L1 offset \d+ of core \(0,0\) run past circular buffer 0",
          "reader_past_page.cpp")


def test_read_into_firmware_region(sim, tensors):
    fails(sim, pipeline(sim, tensors, reader="reader_firmware.cpp"),
          r"noc_async_read \(destination\): 64 bytes at L1 offset 4096 of core \(0,0\) land in the firmware's region",
          "reader_firmware.cpp")


def test_read_of_bank_padding(sim, tensors):
    p = pipeline(sim, tensors)
    p.kernels[0].runtime_args[CORE][2] = 7  # page 7 of a 4-page tensor: bank 7 holds no page of it
    p.kernels[0].runtime_args[CORE][3] = 1
    fails(sim, p, r"noc_async_read: DRAM access .* is page 7 of a 4-page tensor: past its last page, in the bank's padding",
          "reader_tiles.cpp")


# ---------------------------------------------------------------- crashes

@pytest.mark.parametrize("kernel,args,pattern", [
    ("null_store.cpp", [0, 0, 0, 0], r"crashed with SIGSEGV .* at address 0x0 \(a null or near-null pointer\), in kernel code"),
    ("stack_overflow.cpp", [0, 0, 0], r"stack overflow: the kernel's stack went past the 1024 KiB"),
    ("l1_past_end.cpp", [0, 0, 0], r"crashed with SIGSEGV .* \(64 bytes past the end of core \(0,0\)'s 1499136-byte L1\)"),
    ("divide_by_zero.cpp", [0, 0, 7], r"crashed with SIGFPE"),
    ("failed_assert.cpp", [0], r"crashed with SIGABRT"),
])
def test_crash_is_reported_and_the_process_survives(sim, tensors, kernel, args, pattern):
    fails(sim, pipeline(sim, tensors, writer=kernel, writer_args=args), pattern, kernel)


# ---------------------------------------------------------------- hangs and polls

def test_infinite_loop_without_api_calls(sim, tensors):
    msg = fails(sim, pipeline(sim, tensors, writer="infinite_loop.cpp", writer_args=[]),
                r"hang in tile_op: core \(0,0\) riscv_0 kernel .*infinite_loop.cpp loops without API calls", "infinite_loop.cpp")
    # every core's state: the spinning writer, and the compute kernel blocked on the CB it fills
    assert re.search(r"riscv_0 .*infinite_loop.cpp at cycle \d+: spinning in kernel code", msg), msg
    assert "blocked in cb_reserve_back(cb 16" in msg, msg


def test_watchdog_on_modeled_cycles(sim, tensors):
    saved = dict(sim.watchdog)
    sim.watchdog["watchdog_cycles"] = 2_000_000
    try:
        msg = fails(sim, pipeline(sim, tensors, writer="barrier_loop.cpp", writer_args=[]),
                    r"watchdog: no CB, NoC or semaphore progress anywhere for 2000000 modeled cycles", "barrier_loop.cpp")
    finally:
        sim.watchdog = saved
    assert "blocked in cb_reserve_back(cb 16" in msg, msg


def test_watchdog_on_cpu_time(sim, tensors):
    saved = dict(sim.watchdog)
    sim.watchdog["watchdog_seconds"] = 0.2
    try:
        msg = fails(sim, pipeline(sim, tensors, writer="arg_loop.cpp", writer_args=[0]),
                    r"watchdog: tile_op made no CB, NoC or semaphore progress for 0.2\d* s", "arg_loop.cpp")
    finally:
        sim.watchdog = saved
    assert re.search(r"riscv_0 .*arg_loop.cpp at cycle \d+: running", msg), msg


def test_volatile_poll_of_a_semaphore_works(sim, tensors):
    ta, to = tensors
    p = pipeline(sim, tensors, reader="poll_reader.cpp", writer="poll_writer.cpp")
    p.semaphores = [Semaphore(0, CoreRangeSet.of([CORE]), 0)]
    t0 = time.perf_counter()
    r = sim.run(p)
    wall = time.perf_counter() - t0
    np.testing.assert_array_equal(sim.download(to), bf16(A))
    assert wall < 10, wall
    # The poller resumes at the modeled time of the increment that releases it: the same cycles on every
    # run, whatever ran before, and little more than the pipeline without the poll.
    plain = sim.run(pipeline(sim, tensors)).cycles
    assert sim.run(p).cycles == r.cycles
    assert plain < r.cycles < plain + 2000, (plain, r.cycles)
