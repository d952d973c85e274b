"""The data-movement object API (Noc, DataflowBuffer, TensorAccessor endpoints, CoreLocalMem, Semaphore,
get_local_cb_interface, named and typed kernel args) through small programs of tests/kernels, against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import TEST_KERNELS, bf16
from ttprefill.device.jit import KernelCompileError
from ttprefill.device.program import (
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    Program,
    Role,
    Semaphore,
    TensorBinding,
)
from ttprefill.device.sim_device import SimError

RNG = np.random.default_rng(7)
A = RNG.standard_normal((64, 96)).astype(np.float32)


def copied(x: np.ndarray, in_fmt: DataFormat, out_fmt: DataFormat) -> np.ndarray:
    """What a copy_tile/pack_tile round trip gives: Float32 input reaches DST through srcA as TF32
    (13 low mantissa bits dropped); bfloat16 at either end rounds to nearest even."""
    if in_fmt == DataFormat.Float32:
        x = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return bf16(x) if DataFormat.Float16_b in (in_fmt, out_fmt) else x


def chain_program(src, dst, core=CoreCoord(0, 0), reader_cb: int = 0) -> Program:
    """dfb_reader -> dfb_copy -> dfb_writer on one core (c_0 -> c_2)."""
    cores = CoreRangeSet.of([core])
    n = src.num_pages
    cbs = [CircularBuffer(0, src.data_format, src.page_size, 2, cores),
           CircularBuffer(2, dst.data_format, dst.page_size, 2, cores)]
    kernels = [
        Kernel(TEST_KERNELS / "dfb_reader.cpp", Role.RISCV_1, cores, src.accessor_args(),
               named_compile_time_args={"cb_in": reader_cb}, runtime_args={core: [src.address, 0, n]}),
        Kernel(TEST_KERNELS / "dfb_copy.cpp", Role.COMPUTE, cores, runtime_args={core: [n]},
               compute_config=ComputeConfig(fp32_dest_acc_en=True)),
        Kernel(TEST_KERNELS / "dfb_writer.cpp", Role.RISCV_0, cores, [2, *dst.accessor_args()],
               runtime_args={core: [dst.address, 0, n]}),
    ]
    return Program(kernels=kernels, circular_buffers=cbs, name="dfb_chain")


@pytest.mark.parametrize("in_fmt,out_fmt", [(DataFormat.Float16_b, DataFormat.Float16_b),
                                            (DataFormat.Float32, DataFormat.Float32),
                                            (DataFormat.Float16_b, DataFormat.Float32)])
def test_reader_compute_writer_through_objects(sim, in_fmt, out_fmt):
    src = sim.upload(A, in_fmt)
    dst = sim.allocate(A.shape, out_fmt)
    try:
        report = sim.run(chain_program(src, dst))
        np.testing.assert_array_equal(sim.download(dst), copied(A, in_fmt, out_fmt))
        assert report.cycles > 0
    finally:
        sim.free(src)
        sim.free(dst)


def test_named_arg_that_was_not_given_does_not_compile(sim):
    src = sim.upload(A, DataFormat.Float16_b)
    dst = sim.allocate(A.shape, DataFormat.Float16_b)
    try:
        program = chain_program(src, dst)
        program.kernels[0].named_compile_time_args = {"cb_input": 0}
        with pytest.raises(KernelCompileError, match="named_compile_time_arg_not_found"):
            sim.run(program)
    finally:
        sim.free(src)
        sim.free(dst)


def test_named_arg_value_reaches_the_kernel(sim):
    # The reader fills the buffer the named arg names: naming c_1 leaves c_0 empty and the run deadlocks.
    src = sim.upload(A, DataFormat.Float16_b)
    dst = sim.allocate(A.shape, DataFormat.Float16_b)
    try:
        program = chain_program(src, dst, reader_cb=1)
        program.circular_buffers.append(CircularBuffer(1, src.data_format, src.page_size, 2,
                                                       CoreRangeSet.of([CoreCoord(0, 0)])))
        with pytest.raises(SimError, match="cb_wait_front"):
            sim.run(program)
    finally:
        sim.free(src)
        sim.free(dst)


def test_multicast_with_semaphore_objects(sim):
    """(0,0) reads 3 pages and multicasts each into c_0 of (1,0) and (2,0); every core writes its copy.
    The multicasts go on NoC 0 (RISCV_0), whose rectangles run from the low corner to the high one."""
    x = RNG.standard_normal((32, 96)).astype(np.float32)
    count = 3
    src = sim.upload(x, DataFormat.Float16_b)
    dst = sim.allocate((96, 96), DataFormat.Float16_b)
    sender, receivers = CoreCoord(0, 0), [CoreCoord(1, 0), CoreCoord(2, 0)]
    all_cores = CoreRangeSet.of([sender, *receivers])
    rx = CoreRangeSet.of(receivers)
    (sx, sy), (x0, y0), (x1, y1) = (sim.worker_noc_coord(c) for c in (sender, receivers[0], receivers[-1]))
    ready, valid = 0, 1
    try:
        kernels = [
            Kernel(TEST_KERNELS / "mcast_sender.cpp", Role.RISCV_0, CoreRangeSet.of([sender]), src.accessor_args(),
                   runtime_args={sender: [src.address, count, len(receivers), x0, y0, x1, y1, ready, valid]}),
            Kernel(TEST_KERNELS / "mcast_receiver.cpp", Role.RISCV_0, rx,
                   runtime_args={c: [count, sx, sy, ready, valid] for c in receivers}),
            Kernel(TEST_KERNELS / "dfb_writer.cpp", Role.RISCV_1, all_cores, [0, *dst.accessor_args()],
                   runtime_args={c: [dst.address, i * count, count] for i, c in enumerate([sender, *receivers])}),
        ]
        program = Program(kernels=kernels,
                          circular_buffers=[CircularBuffer(0, src.data_format, src.page_size, 2, all_cores)],
                          semaphores=[Semaphore(ready, all_cores), Semaphore(valid, all_cores)], name="mcast")
        sim.run(program)
        np.testing.assert_array_equal(sim.download(dst), np.concatenate([bf16(x)] * 3, axis=0))
    finally:
        sim.free(src)
        sim.free(dst)


def probe_program(sim, misuse: int) -> Program:
    core = CoreCoord(0, 0)
    cores = CoreRangeSet.of([core])
    return Program(
        kernels=[Kernel(TEST_KERNELS / "cb_interface_probe.cpp", Role.RISCV_0, cores,
                        runtime_args={core: [2048, 4, misuse]})],
        circular_buffers=[CircularBuffer(0, DataFormat.Float16_b, 2048, 4, cores)], name="cb_probe")


def test_local_cb_interface_reports_the_buffer(sim):
    sim.run(probe_program(sim, 0))


def test_moving_a_fifo_pointer_by_hand_stops_the_run(sim):
    with pytest.raises(SimError, match="get_local_cb_interface.*not modeled"):
        sim.run(probe_program(sim, 1))


def test_failed_assert_stops_the_run_with_its_line(sim):
    with pytest.raises(SimError, match=r"ASSERT: kernel assertion failed at line \d+"):
        sim.run(probe_program(sim, 2))


def test_endpoints_inline_write_and_multicast_increment(sim):
    x = RNG.standard_normal((32, 32)).astype(np.float32)
    src = sim.upload(x, DataFormat.Float16_b)
    dst = sim.allocate(x.shape, DataFormat.Float16_b)
    a, b = CoreCoord(0, 0), CoreCoord(1, 0)
    (ax, ay), (bx, by) = sim.worker_noc_coord(a), sim.worker_noc_coord(b)
    both = CoreRangeSet.of([a, b])
    try:
        kernel = Kernel(TEST_KERNELS / "endpoints_probe.cpp", Role.RISCV_0, both, dst.accessor_args(),
                        runtime_args={a: [0, src.address, dst.address, bx, by, 2],
                                      b: [1, 0, 0, ax, ay, 2]})
        sim.run(Program(kernels=[kernel],
                        circular_buffers=[CircularBuffer(0, src.data_format, src.page_size, 1, both)],
                        semaphores=[Semaphore(2, both)], name="endpoints"))
        np.testing.assert_array_equal(sim.download(dst), bf16(x))
    finally:
        sim.free(src)
        sim.free(dst)


def test_metal2_names_and_page_iterator(sim):
    """A kernel written against args::/dfb::/tensor:: names (the generated headers) walks pages 2..5."""
    x = RNG.standard_normal((32, 8 * 32)).astype(np.float32)
    src = sim.upload(x, DataFormat.Float32)
    dst = sim.allocate((32, 4 * 32), DataFormat.Float32)
    core = CoreCoord(0, 0)
    cores = CoreRangeSet.of([core])
    marker = 0x3F800000  # 1.0f into the first element of every page
    try:
        reader = Kernel(TEST_KERNELS / "pages_reader.cpp", Role.RISCV_1, cores,
                        named_compile_time_args={"page_bytes": src.page_size},
                        runtime_arg_names=["first", "count"], runtime_args={core: [2, 4, marker]},
                        dfb_bindings={"in": 0}, tensor_bindings={"src": TensorBinding(tuple(src.accessor_args()),
                                                                                      src.address)})
        writer = Kernel(TEST_KERNELS / "dfb_writer.cpp", Role.RISCV_0, cores, [0, *dst.accessor_args()],
                        runtime_args={core: [dst.address, 0, 4]})
        sim.run(Program(kernels=[reader, writer],
                        circular_buffers=[CircularBuffer(0, src.data_format, src.page_size, 2, cores)],
                        name="metal2_pages"))
        expected = x[:, 64:192].copy()
        expected[0, ::32] = 1.0  # element 0 of each tile (tiles are stored face by face, row 0 first)
        np.testing.assert_array_equal(sim.download(dst), expected)
    finally:
        sim.free(src)
        sim.free(dst)


def test_write_zeros_to_l1_and_dram(sim):
    """The reader zeroes the first half of every page in L1; the writer then zeroes output page 0 in DRAM."""
    src = sim.upload(A, DataFormat.Float16_b)
    dst = sim.allocate(A.shape, DataFormat.Float16_b)
    try:
        program = chain_program(src, dst)
        program.kernels[0].defines["ZERO_FIRST_HALF"] = "1"
        program.kernels[2].defines["ZERO_FIRST_PAGE"] = "1"
        sim.run(program)
        expected = bf16(A).copy()
        for i in range(0, A.shape[0], 32):
            expected[i:i + 16, :] = 0  # faces 0 and 1 (the top 16 rows) are the first half of a tile's bytes
        expected[:32, :32] = 0  # page 0
        np.testing.assert_array_equal(sim.download(dst), expected)
    finally:
        sim.free(src)
        sim.free(dst)


def test_args_by_l1_address(sim):
    cores = CoreRangeSet.of([CoreCoord(0, 0), CoreCoord(1, 0)])
    kernels = [Kernel(TEST_KERNELS / "arg_addr_probe.cpp", role, cores, common_runtime_args=[7, 8, 9],
                      runtime_args={c: [3, 10 + c.x + k, 20, 30 + k] for c in cores.cores()})
               for k, role in enumerate((Role.RISCV_0, Role.RISCV_1))]
    sim.run(Program(kernels=kernels, name="arg_addr"))
