"""Loud failures: each stops the run with a message naming the problem, and the simulator stays usable."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import TEST_KERNELS, bf16, run_tile_op, tile_op_program
from ttprefill.device.jit import KernelCompileError
from ttprefill.device.program import (
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    L1OverflowError,
    Program,
    Role,
)
from ttprefill.device.sim_device import SimError

A = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 100


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


def test_deadlock_names_blocked_fibers_and_cb_levels(sim, tensors):
    ta, to = tensors
    p = tile_op_program(sim, {"OP_COPY": "1"}, ta, None, to)
    c = CoreCoord(0, 0)
    p.kernels[0].runtime_args[c][3] = 2  # the reader sends 2 tiles; compute waits for 4
    with pytest.raises(SimError) as e:
        sim.run(p)
    msg = str(e.value)
    assert "deadlock" in msg
    assert "compute_op.cpp" in msg and "cb_wait_front(cb 0, 1 pages)" in msg
    assert "writer_tiles.cpp" in msg and "cb_wait_front(cb 16, 1 pages)" in msg
    assert "cb0=0/2 (pushed 2, popped 2)" in msg
    still_usable(sim)


def test_l1_overflow_is_refused_before_dispatch(sim, tensors):
    ta, to = tensors
    p = tile_op_program(sim, {"OP_COPY": "1"}, ta, None, to)
    cores = CoreRangeSet.of([(0, 0)])
    p.circular_buffers[0] = CircularBuffer(0, DataFormat.Float16_b, 2048, 800, cores)
    with pytest.raises(L1OverflowError, match=r"need \d+ B of L1 on core \(0, 0\).*lower the block sizes"):
        sim.run(p)
    still_usable(sim)


def test_unconfigured_cb(sim, tensors):
    ta, to = tensors
    p = tile_op_program(sim, {"OP_COPY": "1"}, ta, None, to)
    p.circular_buffers = [cb for cb in p.circular_buffers if cb.index != 16]
    with pytest.raises(SimError, match="circular buffer 16 is not configured on this core"):
        sim.run(p)
    still_usable(sim)


@pytest.mark.parametrize("misuse,pattern", [
    ("MISUSE_NO_ACQUIRE", "writes DST without holding it"),
    ("MISUSE_PACK_WITHOUT_WAIT", "the packer does not hold DST"),
    ("MISUSE_DST_INDEX", "DST index 4 is past the 4 tiles"),
    ("MISUSE_WRONG_INIT", "the FPU is configured for copy"),
    ("MISUSE_DOUBLE_ACQUIRE", "DST is already held"),
    ("MISUSE_PACK_EXP_WHILE_MATH_HOLDS_DST", "the pack thread holds DST only between tile_regs_wait"),
    ("MISUSE_BCAST_WITHOUT_INIT", "sfpu_bcast_col_init"),
    ("MISUSE_NO_RELEASE", "missing tile_regs_release"),
])
def test_dst_misuse(sim, tensors, misuse, pattern):
    ta, to = tensors
    p = tile_op_program(sim, {"OP_COPY": "1"}, ta, None, to)
    c = CoreCoord(0, 0)
    p.kernels[1] = Kernel(TEST_KERNELS / "misuse.cpp", Role.COMPUTE, p.kernels[1].cores, defines={misuse: "1"},
                          compute_config=ComputeConfig(fp32_dest_acc_en=True))
    with pytest.raises(SimError, match=pattern) as e:
        sim.run(p)
    assert "core (0,0) compute kernel kernels/misuse.cpp" in str(e.value)
    still_usable(sim)


def test_out_of_bounds_dram_read(sim, tensors):
    ta, to = tensors
    p = tile_op_program(sim, {"OP_COPY": "1"}, ta, None, to)
    c = CoreCoord(0, 0)
    p.kernels[0].runtime_args[c][2] = 40  # first tile past the 4 the tensor has
    p.kernels[1].runtime_args[c][0] = 4
    with pytest.raises(SimError, match="outside every allocated buffer"):
        sim.run(p)
    still_usable(sim)


def test_runtime_arg_past_what_was_set(sim, tensors):
    ta, to = tensors
    p = tile_op_program(sim, {"OP_COPY": "1"}, ta, None, to)
    c = CoreCoord(0, 0)
    p.kernels[2].runtime_args[c] = p.kernels[2].runtime_args[c][:2]
    with pytest.raises(SimError, match=r"get_arg_val\(2\): runtime arg index past the 2 set"):
        sim.run(p)
    still_usable(sim)


def test_kernel_compile_error_shows_compiler_message_and_path(sim, tensors, tmp_path):
    ta, to = tensors
    bad = tmp_path / "broken_kernel.cpp"
    bad.write_text('#include "api/dataflow/dataflow_api.h"\nvoid kernel_main() { undefined_call(); }\n')
    p = tile_op_program(sim, {"OP_COPY": "1"}, ta, None, to)
    p.kernels[0] = Kernel(bad, Role.RISCV_1, p.kernels[0].cores)
    with pytest.raises(KernelCompileError) as e:
        sim.run(p)
    assert str(bad) in str(e.value) and "undefined_call" in str(e.value)
    still_usable(sim)


def test_same_program_twice_gives_same_bytes_and_cycles(sim, tensors):
    ta, to = tensors
    p = tile_op_program(sim, {"OP_SFPU": "1", "SFPU_INIT": "exp_tile_init", "SFPU_CALL": "exp_tile"}, ta, None, to)
    r1 = sim.run(p)
    out1 = sim.read_pages(to, 0, to.num_pages).tobytes()
    r2 = sim.run(p)
    out2 = sim.read_pages(to, 0, to.num_pages).tobytes()
    assert out1 == out2
    assert r1.cycles == r2.cycles and r1.cores == r2.cores and r1.counters == r2.counters


def test_two_devices_alternate_runs_of_the_same_kernels(sim):
    """Kernel .so files are shared by every device in the process; each run must bind its own."""
    from ttprefill.device.sim_device import SimDevice

    other = SimDevice()
    many = [SimDevice() for _ in range(40)]  # all share one L1 arena in the scarce low 2 GiB
    for dev in (sim, other, sim, other, many[-1]):
        out = run_tile_op(dev, {"OP_COPY": "1"}, A)
        np.testing.assert_array_equal(out, bf16(A))
